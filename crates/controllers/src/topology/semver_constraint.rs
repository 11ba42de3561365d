//! sprig's `semverCompare CONSTRAINT VERSION` for ClusterClass templates, with the
//! constraint syntax of the library sprig uses (Masterminds semver): a leading `v` is
//! allowed on every version, comparators in one range are separated by spaces or commas,
//! ranges by `||`, partial versions are wildcards (`1.24` is any 1.24.x; `= 1.24` too), and
//! `!=` excludes. The comparisons themselves are the `semver` crate's, whose rules for
//! `^`, `~` and pre-releases are the same.

use semver::{Version, VersionReq};

/// Whether `version` satisfies `constraint`; an error names what does not parse.
pub(super) fn satisfies(constraint: &str, version: &str) -> Result<bool, String> {
    let v = parse_version(version)?;
    let mut any = false;
    for range in constraint.split("||") {
        let comparators = comparators(range).map_err(|e| format!("improper constraint {constraint:?}: {e}"))?;
        if comparators.is_empty() {
            return Err(format!("improper constraint {constraint:?}: an empty range"));
        }
        any |= comparators.iter().all(|c| c.matches(&v));
    }
    Ok(any)
}

/// One comparator, `!=` read as the complement of `=`.
enum Term {
    Is(VersionReq),
    IsNot(VersionReq),
}

impl Term {
    fn matches(&self, v: &Version) -> bool {
        match self {
            Self::Is(r) => r.matches(v),
            Self::IsNot(r) => !r.matches(v),
        }
    }
}

fn comparators(range: &str) -> Result<Vec<Term>, String> {
    let mut out = Vec::new();
    let mut rest = range.trim();
    while !rest.is_empty() {
        let op_len = rest.find(|c: char| !matches!(c, '=' | '!' | '<' | '>' | '~' | '^')).unwrap_or(rest.len());
        let (op, after) = rest.split_at(op_len);
        let after = after.trim_start();
        let end = after.find(|c: char| c.is_whitespace() || c == ',').unwrap_or(after.len());
        let (version, next) = after.split_at(end);
        let version = version.strip_prefix('v').unwrap_or(version);
        if version.is_empty() {
            return Err(format!("no version after {op:?}"));
        }
        let (negate, op) = match op {
            "!=" => (true, "="),
            "" => (false, "="),
            other => (false, other),
        };
        let req = VersionReq::parse(&format!("{op}{version}")).map_err(|e| format!("{op}{version}: {e}"))?;
        out.push(if negate { Term::IsNot(req) } else { Term::Is(req) });
        rest = next.trim_start_matches(|c: char| c.is_whitespace() || c == ',');
    }
    Ok(out)
}

/// A version as sprig reads it: an optional `v`, missing minor or patch as zero.
fn parse_version(s: &str) -> Result<Version, String> {
    let bare = s.trim().strip_prefix('v').unwrap_or(s.trim());
    let (core, suffix) = bare.find(['-', '+']).map_or((bare, ""), |i| bare.split_at(i));
    let parts = core.split('.').count();
    let padded = format!("{core}{}{suffix}", ".0".repeat(3usize.saturating_sub(parts)));
    Version::parse(&padded).map_err(|e| format!("invalid semantic version {s:?}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sat(c: &str, v: &str) -> bool {
        satisfies(c, v).unwrap_or_else(|e| panic!("{c} {v}: {e}"))
    }

    #[test]
    fn constraints_read_as_sprig_reads_them() {
        assert!(sat(">= v1.24", "v1.33.0"));
        assert!(!sat("< v1.25", "v1.33.0"));
        assert!(sat("< v1.25", "v1.24.7"));
        assert!(sat(">=1.30.0, <1.32", "v1.31.4"), "comma-separated");
        assert!(sat(">= 1.30 < 1.32", "1.31.4"), "space-separated");
        assert!(!sat(">= 1.30 < 1.32", "1.32.0"));
        assert!(sat("1.31", "v1.31.9"), "a partial version is a wildcard");
        assert!(sat("< 1.20 || >= 1.33", "v1.33.1"), "ranges");
        assert!(!sat("!= 1.33.0", "v1.33.0"));
        assert!(sat("!= 1.33.0", "v1.33.1"));
        assert!(sat("~1.33.0", "1.33.5") && !sat("~1.33.0", "1.34.0"));
        assert!(sat("^1.30", "1.33.0") && !sat("^1.30", "2.0.0"));
        assert!(!sat(">= v1.24", "v1.33.0-rc.1"), "pre-releases only match a range that names one");
        assert!(sat("v1.33", "v1.33"), "a partial version to compare");
    }

    #[test]
    fn what_does_not_parse_is_an_error() {
        assert!(satisfies(">= v1.x.y.z", "v1.33.0").unwrap_err().contains("improper constraint"));
        assert!(satisfies(">=", "v1.33.0").unwrap_err().contains("no version"));
        assert!(satisfies(">= 1.2", "latest").unwrap_err().contains("invalid semantic version"));
    }
}
