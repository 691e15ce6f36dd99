"""Writes a Go module version as a module proxy serves it (the GOPROXY
protocol, `go help goproxy`): DEST/<module>/@v/{list, VERSION.info,
VERSION.mod, VERSION.zip}. `GOPROXY=file://DEST go get MODULE@VERSION`
then fetches it with no network and no version control.

    go_module_proxy.py MODULE_DIR MODULE_PATH VERSION UNIX_TIME DEST

The zip follows the module zip format (golang.org/x/mod/zip): every file
under MODULE_PATH@VERSION/, no directories, no file of a nested module, no
vendor/ directory, fixed file times.
"""

from __future__ import annotations

import datetime
import json
import os
import sys
import zipfile


def main() -> None:
    src, module, version, when, dest = sys.argv[1:6]
    stamp = datetime.datetime.fromtimestamp(int(when), tz=datetime.timezone.utc)
    at = os.path.join(dest, *module.split("/"), "@v")
    os.makedirs(at, exist_ok=True)
    files = []
    for base, dirs, names in os.walk(src):
        dirs.sort()
        rel_dir = os.path.relpath(base, src)
        if rel_dir != "." and (os.path.exists(os.path.join(base, "go.mod")) or "vendor" in rel_dir.split(os.sep)):
            dirs.clear()
            continue
        for n in sorted(names):
            files.append(os.path.normpath(os.path.join(rel_dir, n)))
    # Module zips hold no more than 500 MB of files (the go command's limit).
    total = sum(os.path.getsize(os.path.join(src, f)) for f in files)
    if total >= 500 << 20:
        sys.exit(f"go_module_proxy: {total} bytes of files: over the module zip limit of 500 MiB")
    with zipfile.ZipFile(os.path.join(at, version + ".zip"), "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        for f in files:
            info = zipfile.ZipInfo(f"{module}@{version}/{f.replace(os.sep, '/')}", stamp.timetuple()[:6])
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            with open(os.path.join(src, f), "rb") as fh:
                z.writestr(info, fh.read())
    with open(os.path.join(src, "go.mod"), "rb") as fh, open(os.path.join(at, version + ".mod"), "wb") as out:
        out.write(fh.read())
    with open(os.path.join(at, version + ".info"), "w", encoding="utf-8") as out:
        json.dump({"Version": version, "Time": stamp.strftime("%Y-%m-%dT%H:%M:%SZ")}, out)
    with open(os.path.join(at, "list"), "w", encoding="utf-8") as out:
        out.write(version + "\n")


if __name__ == "__main__":
    main()
