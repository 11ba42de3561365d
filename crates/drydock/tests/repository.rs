//! Rules the source tree keeps: ARCHITECTURE.md's code map names only paths that exist,
//! and no source file grows past the size a reader can hold in mind.

use std::fs;
use std::path::{Path, PathBuf};

/// The most lines a file under `crates/*/src` may have.
const MAX_FILE_LINES: usize = 600;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every `crates/...` path quoted in backticks in `text`.
fn quoted_paths(text: &str) -> Vec<String> {
    text.split('`').skip(1).step_by(2).filter(|s| s.starts_with("crates/")).map(str::to_string).collect()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn the_code_map_names_only_paths_that_exist() {
    let text = fs::read_to_string(root().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let paths = quoted_paths(&text);
    assert!(paths.len() >= 20, "the code map names only {} paths: {paths:?}", paths.len());
    let missing: Vec<&String> = paths.iter().filter(|p| !root().join(p.trim_end_matches('/')).exists()).collect();
    assert!(missing.is_empty(), "ARCHITECTURE.md names paths that do not exist: {missing:?}");
}

#[test]
fn no_source_file_is_longer_than_the_limit() {
    let mut files = Vec::new();
    for krate in fs::read_dir(root().join("crates")).expect("crates").flatten() {
        rust_files(&krate.path().join("src"), &mut files);
    }
    assert!(files.len() > 100, "found only {} source files", files.len());
    let long: Vec<String> = files
        .iter()
        .filter_map(|f| {
            let lines = fs::read_to_string(f).ok()?.lines().count();
            (lines > MAX_FILE_LINES).then(|| format!("{} ({lines} lines)", f.display()))
        })
        .collect();
    assert!(long.is_empty(), "files over {MAX_FILE_LINES} lines: {long:?}");
}

#[test]
fn quoted_paths_are_read_from_backticks() {
    let text = "the `crates/api` crate, `store/mod.rs` and `crates/controllers/src/framework/` and `x`";
    assert_eq!(quoted_paths(text), ["crates/api", "crates/controllers/src/framework/"]);
}
