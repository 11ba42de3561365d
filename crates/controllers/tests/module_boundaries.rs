//! No controller module uses another controller's module: what two controllers share lives
//! in `framework/` (or in `drydock-api`). This reads the sources and fails on any path from
//! one controller into another, `crate::<controller>` or `super::super::<controller>` alike.

use std::path::{Path, PathBuf};

const CONTROLLERS: &[&str] = &[
    "cluster",
    "machine",
    "kubeadmconfig",
    "machineset",
    "machinedeployment",
    "kcp",
    "mhc",
    "clusterclass",
    "ipam",
    "topology",
    "extensionconfig",
];

/// The source files of a controller module: `src/<name>.rs` and everything below `src/<name>/`.
fn files_of(src: &Path, name: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let file = src.join(format!("{name}.rs"));
    if file.is_file() {
        out.push(file);
    }
    let mut dirs = vec![src.join(name)];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// The module path of a file below `src` (`machine/mod.rs` is `["machine"]`).
fn module_path(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).expect("below src");
    let mut parts: Vec<String> = rel.iter().map(|c| c.to_string_lossy().into_owned()).collect();
    let last = parts.pop().expect("a file name");
    let stem = last.trim_end_matches(".rs");
    if stem != "mod" {
        parts.push(stem.to_string());
    }
    parts
}

fn ident_at(s: &str) -> &str {
    let end = s.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(s.len());
    &s[..end]
}

/// The top-level modules a line of code names through `crate::` or a chain of `super::`.
fn crate_modules_named(line: &str, module: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let bytes = line.as_bytes();
    let mut i = 0;
    while i < line.len() {
        let rest = &line[i..];
        let boundary =
            i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_' || bytes[i - 1] == b':');
        if boundary && rest.starts_with("crate::") {
            let after = &rest["crate::".len()..];
            if let Some(group) = after.strip_prefix('{') {
                // `crate::{a, b::c}`: the first segment of each item.
                let inner = group.split('}').next().unwrap_or_default();
                out.extend(inner.split(',').map(|item| ident_at(item.trim()).to_string()));
            } else {
                out.push(ident_at(after).to_string());
            }
            i += "crate::".len();
            continue;
        }
        if boundary && rest.starts_with("super::") {
            let mut ups = 0;
            let mut tail = rest;
            while let Some(t) = tail.strip_prefix("super::") {
                ups += 1;
                tail = t;
            }
            // From `a::b`, `super` is `a` and `super::super` is the crate root.
            if ups == module.len() {
                out.push(ident_at(tail).to_string());
            } else if ups < module.len() {
                out.push(module[0].clone());
            }
            i += "super::".len() * ups;
            continue;
        }
        i += rest.chars().next().map_or(1, char::len_utf8);
    }
    out.retain(|m| !m.is_empty());
    out
}

#[test]
fn no_controller_uses_another_controller() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut violations = Vec::new();
    let mut checked_files = 0;
    let mut checked_lines = 0;
    for &name in CONTROLLERS {
        let files = files_of(&src, name);
        assert!(!files.is_empty(), "controller module {name} has no source files under {}", src.display());
        for file in files {
            let text = std::fs::read_to_string(&file).expect("readable source");
            let module = module_path(&src, &file);
            assert_eq!(module[0], name);
            checked_files += 1;
            for (n, line) in text.lines().enumerate() {
                let code = line.split("//").next().unwrap_or_default();
                if code.trim().is_empty() {
                    continue;
                }
                checked_lines += 1;
                for used in crate_modules_named(code, &module) {
                    if used != name && CONTROLLERS.contains(&used.as_str()) {
                        let rel = file.strip_prefix(&src).unwrap_or(&file).display().to_string();
                        violations.push(format!("{rel}:{}: {name} uses {used}: {}", n + 1, line.trim()));
                    }
                }
            }
        }
    }
    assert!(checked_files >= 2 * CONTROLLERS.len(), "only {checked_files} files checked");
    assert!(checked_lines > 1000, "only {checked_lines} lines checked");
    assert!(violations.is_empty(), "controller modules use each other:\n{}", violations.join("\n"));
}

#[test]
fn the_checker_sees_both_kinds_of_path() {
    let nested = ["machine".to_string(), "node".to_string()];
    assert_eq!(crate_modules_named("use crate::machineset::pause;", &nested), ["machineset"]);
    assert_eq!(crate_modules_named("use crate::{kcp, framework::write};", &nested), ["kcp", "framework"]);
    assert_eq!(crate_modules_named("use super::super::mhc::judge;", &nested), ["mhc"]);
    assert_eq!(crate_modules_named("use super::State;", &nested), ["machine"]);
    assert_eq!(crate_modules_named("let x = my_crate::machine::f();", &nested), Vec::<String>::new());
    let top = ["cluster".to_string()];
    assert_eq!(crate_modules_named("super::machine::f()", &top), ["machine"]);
}
