//! The `ssefold-corpus` binary writes the library's bytes and rejects bad
//! arguments with exit code 2.

use std::process::Command;

fn corpus_bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_ssefold-corpus"))
}

#[test]
fn writes_the_same_bytes_as_the_library() {
    for name in ssefold_corpus::NAMES {
        let out = corpus_bin().args([name, "20000"]).output().unwrap();
        assert!(out.status.success(), "{name}");
        assert_eq!(out.stdout, ssefold_corpus::by_name(name, 20000).unwrap(), "{name}");
    }
}

#[test]
fn bad_arguments_exit_with_2() {
    for args in [&["nope", "10"][..], &["openai-chat"], &["openai-chat", "many"], &[]] {
        let out = corpus_bin().args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
}
