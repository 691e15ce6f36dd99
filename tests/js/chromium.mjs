// Headless Chromium for the browser tests and benchmarks: Debian's build
// (tools/setup.sh installs it; CHROMIUM=path picks another), launched the
// same way everywhere.
import { existsSync } from "node:fs";
import puppeteer from "puppeteer-core";

/** The Chromium executable, or an Error saying how to get one. */
export function chromiumPath() {
  const path = [process.env.CHROMIUM, "/usr/bin/chromium", "/usr/bin/chromium-browser"].find((p) => p && existsSync(p));
  if (!path) throw new Error("Chromium not found: tools/setup.sh installs Debian's chromium (or set CHROMIUM)");
  return path;
}

/** A headless browser (close it when done). */
export function launchChromium() {
  return puppeteer.launch({
    executablePath: chromiumPath(),
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
  });
}
