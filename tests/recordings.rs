//! Real provider streams recorded by other projects' test suites
//! (`tests/recordings/`, see its README.md and manifest.json).
//!
//! Asserts only what does not depend on how the fold shapes the message:
//! the manifest and the files agree; no stream panics; auto-detection picks
//! the manifest's dialect; and the normalized events, the folded message and
//! the ending (the error of feed/finish, if any) are the same whole, in
//! 1-byte chunks and in several random chunkings, and the same for `Auto` as
//! for the explicit dialect.

use std::collections::BTreeSet;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

use serde_json::Value;
use ssefold::providers::Provider;

use crate::prov_common;
use prov_common::{lcg, run_with, Run};

/// Recordings known to fail one of the checks below, with the failure as
/// it was seen. Do not add entries to hide a new failure without saying why.
/// (file relative to tests/recordings/, what fails)
const KNOWN_FAILURES: &[(&str, &str)] = &[];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/recordings")
}

fn manifest() -> Vec<Value> {
    let text = std::fs::read_to_string(root().join("manifest.json")).expect("manifest.json");
    serde_json::from_str::<Value>(&text).expect("manifest.json parses").as_array().expect("a list").clone()
}

fn dialect(name: &str) -> Provider {
    match name {
        "anthropic" => Provider::Anthropic,
        "openai_chat" => Provider::OpenAIChat,
        "openai_responses" => Provider::OpenAIResponses,
        "gemini" => Provider::Gemini,
        "bedrock" => Provider::Bedrock,
        "bedrock_converse" => Provider::BedrockConverse,
        "ollama" => Provider::Ollama,
        other => panic!("unknown dialect {other}"),
    }
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            walk(&p, out);
        } else {
            out.push(p);
        }
    }
}

#[test]
fn manifest_and_files_agree() {
    let m = manifest();
    let mut listed = BTreeSet::new();
    for e in &m {
        let file = e["file"].as_str().expect("file");
        assert!(listed.insert(file.to_owned()), "{file} listed twice");
        assert!(root().join(file).is_file(), "{file} is listed but missing");
        let d = e["dialect"].as_str().expect("dialect");
        dialect(d);
        assert!(file.starts_with(&format!("{d}/")), "{file}: directory is not its dialect {d}");
        for key in ["provider", "repo", "path", "license", "extraction"] {
            assert!(e[key].is_string(), "{file}: {key}");
        }
        let commit = e["commit"].as_str().expect("commit");
        assert!(commit.len() == 40 && commit.bytes().all(|b| b.is_ascii_hexdigit()), "{file}: commit");
        assert!(e["recorded"].is_boolean(), "{file}: recorded");
        assert!(e["covers"].is_array(), "{file}: covers");
        let lic = root().join("licenses").join(format!("{}.LICENSE", e["repo"].as_str().unwrap().replace('/', "__")));
        assert!(lic.is_file(), "{file}: no license copy {}", lic.display());
    }
    let mut on_disk = Vec::new();
    for d in ["anthropic", "openai_chat", "openai_responses", "gemini"] {
        if root().join(d).is_dir() {
            walk(&root().join(d), &mut on_disk);
        }
    }
    for p in on_disk {
        let rel = p.strip_prefix(root()).unwrap().to_string_lossy().replace('\\', "/");
        assert!(listed.contains(&rel), "{rel} is not in manifest.json");
    }
    for (f, _) in KNOWN_FAILURES {
        assert!(listed.contains(*f), "KNOWN_FAILURES names {f}, which is not in the manifest");
    }
}

fn first_difference(a: &Run, b: &Run) -> String {
    if a.detected != b.detected {
        return format!("detected {} vs {}", a.detected, b.detected);
    }
    if a.error != b.error {
        return format!("ending {:?} vs {:?}", a.error, b.error);
    }
    if a.message != b.message {
        return "folded message differs".to_owned();
    }
    let i = a.events.iter().zip(&b.events).position(|(x, y)| x != y).unwrap_or(a.events.len().min(b.events.len()));
    format!(
        "events differ at #{i} ({} vs {} events): {} vs {}",
        a.events.len(),
        b.events.len(),
        a.events.get(i).map_or("-".to_owned(), Value::to_string),
        b.events.get(i).map_or("-".to_owned(), Value::to_string)
    )
}

/// Checks one recording; Err(description) on the first failure.
fn check(bytes: &[u8], want: Provider) -> Result<(), String> {
    let whole = run_with(Provider::Auto, bytes, &mut || usize::MAX);
    if whole.detected != want.name() {
        return Err(format!("auto detected {} (ending {:?})", whole.detected, whole.error));
    }
    let mut explicit = run_with(want, bytes, &mut || usize::MAX);
    explicit.detected = whole.detected;
    if explicit != whole {
        return Err(format!("explicit {} vs auto: {}", want.name(), first_difference(&explicit, &whole)));
    }
    let one = run_with(Provider::Auto, bytes, &mut || 1);
    if one != whole {
        return Err(format!("1-byte chunking: {}", first_difference(&one, &whole)));
    }
    for (seed, max) in [(1u64, 7usize), (2, 64), (3, 512), (4, 4096)] {
        let r = run_with(Provider::Auto, bytes, &mut lcg(seed, max));
        if r != whole {
            return Err(format!("random chunking (seed {seed}, max {max}): {}", first_difference(&r, &whole)));
        }
    }
    let r = run_with(want, bytes, &mut lcg(9, 32));
    if r.events != whole.events || r.message != whole.message || r.error != whole.error {
        return Err(format!("explicit {} random chunking: {}", want.name(), first_difference(&r, &whole)));
    }
    Ok(())
}

#[test]
fn every_recording_is_chunking_invariant_and_detected() {
    let m = manifest();
    let mut failures: Vec<(String, String)> = Vec::new();
    for e in &m {
        let file = e["file"].as_str().unwrap().to_owned();
        let want = dialect(e["dialect"].as_str().unwrap());
        let bytes = std::fs::read(root().join(&file)).unwrap();
        let outcome = catch_unwind(AssertUnwindSafe(|| check(&bytes, want)));
        match outcome {
            Ok(Ok(())) => {}
            Ok(Err(why)) => failures.push((file, why)),
            Err(p) => {
                let msg = p
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| p.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                    .unwrap_or_default();
                failures.push((file, format!("panic: {msg}")));
            }
        }
    }
    let known: BTreeSet<&str> = KNOWN_FAILURES.iter().map(|(f, _)| *f).collect();
    let new: Vec<_> = failures.iter().filter(|(f, _)| !known.contains(f.as_str())).collect();
    let failed: BTreeSet<&str> = failures.iter().map(|(f, _)| f.as_str()).collect();
    let fixed: Vec<_> = known.iter().filter(|f| !failed.contains(*f)).collect();
    for (f, why) in &failures {
        eprintln!("FAIL {f}: {why}");
    }
    assert!(new.is_empty(), "{} recordings fail (not in KNOWN_FAILURES): {new:#?}", new.len());
    assert!(fixed.is_empty(), "KNOWN_FAILURES entries that now pass (remove them): {fixed:?}");
    eprintln!("{} recordings checked, {} known failures", m.len(), failures.len());
}

/// A stream cut anywhere (no `finish`: parts still open, a Vertex call's
/// arguments still streaming) gives the same message by
/// `Stream::into_message` as by `Stream::message`, for every recording.
#[test]
fn the_message_moved_out_is_the_message_at_every_cut() {
    let mut checked = 0;
    for e in &manifest() {
        let want = dialect(e["dialect"].as_str().unwrap());
        let bytes = std::fs::read(root().join(e["file"].as_str().unwrap())).unwrap();
        for cut in [bytes.len() / 4, bytes.len() / 2, bytes.len() * 3 / 4, bytes.len().saturating_sub(1)] {
            let mut stream = ssefold::providers::Stream::new(want);
            // An error ends the feeding; the message so far is compared all the same.
            let _ = stream.feed(&bytes[..cut], |_| {});
            let message = stream.message();
            assert_eq!(stream.into_message().to_string(), message.to_string(), "{} cut at {cut}", e["file"]);
            checked += 1;
        }
    }
    assert!(checked > 400, "{checked} cuts checked");
}

/// Gemini has no terminal event: a recording whose chunks carry a
/// `finishReason` ends normally at the end of its body, its folded
/// candidates hold every part the chunks sent, and the text parts' texts
/// are the concatenation of the chunks' texts.
#[test]
fn gemini_recordings_end_at_their_finish_reason() {
    let mut checked = 0;
    for e in manifest().iter().filter(|e| e["dialect"] == "gemini") {
        let file = e["file"].as_str().unwrap();
        let bytes = std::fs::read(root().join(file)).unwrap();
        let text = String::from_utf8_lossy(&bytes);
        let chunks: Vec<Value> = text
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .filter_map(|d| serde_json::from_str(d.trim()).ok())
            .collect();
        let run = run_with(Provider::Gemini, &bytes, &mut || usize::MAX);
        if chunks.iter().any(|c| c.get("error").is_some()) {
            assert!(run.error.as_deref().is_some_and(|e| e.starts_with("Provider")), "{file}: {:?}", run.error);
            continue;
        }
        let finished = chunks
            .iter()
            .flat_map(|c| c["candidates"].as_array().cloned().unwrap_or_default())
            .any(|c| c.get("finishReason").is_some());
        if !finished {
            continue;
        }
        assert_eq!(run.error, None, "{file}");
        let sent: String = chunks
            .iter()
            .flat_map(|c| c["candidates"][0]["content"]["parts"].as_array().cloned().unwrap_or_default())
            .filter_map(|p| p["text"].as_str().map(str::to_owned))
            .collect();
        let folded: String = run.message["candidates"][0]["content"]["parts"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect();
        assert_eq!(folded, sent, "{file}");
        checked += 1;
    }
    assert!(checked >= 50, "{checked}");
}

/// Ollama's `/api/chat` ends at its `done: true` line: a recording that has
/// one ends normally, its folded `message.content` and `message.thinking`
/// are the concatenation of the lines' fragments, and its top-level members
/// are the last line's; one that has none is incomplete.
#[test]
fn ollama_recordings_fold_to_their_lines() {
    let mut checked = 0;
    for e in manifest().iter().filter(|e| e["dialect"] == "ollama") {
        let file = e["file"].as_str().unwrap();
        let bytes = std::fs::read(root().join(file)).unwrap();
        let lines: Vec<Value> =
            String::from_utf8_lossy(&bytes).lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
        let run = run_with(Provider::Ollama, &bytes, &mut || usize::MAX);
        if lines.iter().any(|l| l.get("error").is_some()) {
            assert!(run.error.as_deref().is_some_and(|e| e.starts_with("Provider")), "{file}: {:?}", run.error);
            continue;
        }
        let Some(last) = lines.iter().rfind(|l| l["done"] == true) else {
            assert!(run.error.as_deref().is_some_and(|e| e.starts_with("Incomplete")), "{file}: {:?}", run.error);
            continue;
        };
        assert_eq!(run.error, None, "{file}");
        let joined = |key: &str| -> String { lines.iter().filter_map(|l| l["message"][key].as_str()).collect() };
        assert_eq!(run.message["message"]["content"], joined("content"), "{file}");
        if lines.iter().any(|l| l["message"].get("thinking").is_some()) {
            assert_eq!(run.message["message"]["thinking"], joined("thinking"), "{file}");
        }
        for (k, v) in last.as_object().unwrap().iter().filter(|(k, v)| *k != "message" && !v.is_null()) {
            assert_eq!(&run.message[k], v, "{file}: {k}");
        }
        assert_eq!(run.events.iter().filter(|e| e["event"] == "turn_end").count(), 1, "{file}");
        checked += 1;
    }
    assert!(checked >= 5, "{checked}");
}
