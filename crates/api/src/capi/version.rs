//! Kubernetes version strings: the `vX.Y.Z` format admission requires, tolerant parsing into
//! [`semver::Version`], and the minor-skew rules upgrades and preflight checks use.

use semver::{BuildMetadata, Prerelease, Version};

/// Why a version string could not be parsed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not a valid Kubernetes version")]
pub struct VersionError(pub String);

/// True if `s` is a Kubernetes semantic version with the leading `v`, e.g. `v1.30.2` or
/// `v1.30.2-rc.1+build`: `v<major>.<minor>.<patch>` without leading zeros, followed only by
/// characters from `[-0-9a-zA-Z_.+]`.
pub fn is_kube_semver(s: &str) -> bool {
    let Some(rest) = s.strip_prefix('v') else { return false };
    let mut parts = rest.splitn(3, '.');
    let (Some(major), Some(minor), Some(tail)) = (parts.next(), parts.next(), parts.next()) else {
        return false;
    };
    let patch_len = tail.bytes().take_while(u8::is_ascii_digit).count();
    let (patch, suffix) = tail.split_at(patch_len);
    [major, minor, patch].iter().all(|n| is_number_without_leading_zero(n))
        && suffix.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'+'))
}

fn is_number_without_leading_zero(n: &str) -> bool {
    !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) && (n == "0" || !n.starts_with('0'))
}

/// Adds the `v` prefix admission defaulting puts on versions (`1.30.2` -> `v1.30.2`).
/// Empty strings are left alone so that validation reports them as missing.
pub fn with_v_prefix(s: &str) -> String {
    if s.is_empty() || s.starts_with('v') { s.to_string() } else { format!("v{s}") }
}

/// Parses a version leniently: surrounding whitespace and a leading `v` are ignored, a missing
/// patch counts as `.0`, and a suffix semver does not accept (e.g. `_x`) is dropped.
pub fn parse(s: &str) -> Result<Version, VersionError> {
    let err = || VersionError(s.to_string());
    let t = s.trim();
    let t = t.strip_prefix('v').unwrap_or(t);
    if let Ok(v) = Version::parse(t) {
        return Ok(v);
    }
    let mut parts = t.splitn(3, '.');
    let major = parts.next().and_then(|n| n.parse::<u64>().ok()).ok_or_else(err)?;
    let minor = parts.next().and_then(|n| n.parse::<u64>().ok()).ok_or_else(err)?;
    let patch = match parts.next() {
        None => 0,
        Some(tail) => {
            let digits: String = tail.chars().take_while(char::is_ascii_digit).collect();
            digits.parse::<u64>().map_err(|_| err())?
        }
    };
    Ok(Version { major, minor, patch, pre: Prerelease::EMPTY, build: BuildMetadata::EMPTY })
}

/// `major.minor.0` of `v`: the version with pre-release, build and patch dropped.
pub fn major_minor(v: &Version) -> Version {
    Version::new(v.major, v.minor, 0)
}

/// True if going from `old` to `new` skips a minor release (`new >= old.major.(old.minor+2).0`).
/// Patch releases may change freely, and downgrades are not a skip.
pub fn skips_minor(old: &Version, new: &Version) -> bool {
    *new >= Version::new(old.major, old.minor + 2, 0)
}

/// True if `new` is lower than `old` (build metadata included).
pub fn is_downgrade(old: &Version, new: &Version) -> bool {
    new < old
}

/// Minor versions kubelets may lag behind the control plane: 3 from Kubernetes 1.28, else 2.
pub fn kubelet_minor_skew(control_plane: &Version) -> u64 {
    if *control_plane >= Version::new(1, 28, 0) { 3 } else { 2 }
}

/// True if a node at `node` may run against a control plane at `control_plane`: same major,
/// not newer in minor, and at most [`kubelet_minor_skew`] minors older.
pub fn kubelet_within_skew(control_plane: &Version, node: &Version) -> bool {
    node.major == control_plane.major
        && node.minor <= control_plane.minor
        && control_plane.minor - node.minor <= kubelet_minor_skew(control_plane)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kube_semver_format() {
        for ok in ["v1.30.2", "v0.0.0", "v1.30.2-rc.1", "v1.30.2+build.5", "v1.30.2_custom", "v10.200.3000"] {
            assert!(is_kube_semver(ok), "{ok}");
        }
        for bad in ["1.30.2", "v1.30", "v01.30.2", "v1.030.2", "v1.30.02", "v1.30.2 ", "va.b.c", "", "v", "v1.30.2/x"] {
            assert!(!is_kube_semver(bad), "{bad}");
        }
    }

    #[test]
    fn prefix_and_parse() {
        assert_eq!(with_v_prefix("1.30.2"), "v1.30.2");
        assert_eq!(with_v_prefix("v1.30.2"), "v1.30.2");
        assert_eq!(with_v_prefix(""), "");
        assert_eq!(parse("v1.30.2").unwrap(), Version::new(1, 30, 2));
        assert_eq!(parse(" 1.29 ").unwrap(), Version::new(1, 29, 0));
        assert_eq!(parse("v1.30.2_custom").unwrap(), Version::new(1, 30, 2));
        assert_eq!(parse("v1.30.2-rc.1").unwrap().pre.as_str(), "rc.1");
        assert!(parse("vx.1.2").is_err());
        assert!(parse("1").is_err());
        assert_eq!(major_minor(&Version::new(1, 30, 7)), Version::new(1, 30, 0));
    }

    #[test]
    fn minor_skew_rules() {
        let v = |s| parse(s).unwrap();
        assert!(!skips_minor(&v("v1.29.5"), &v("v1.30.9")));
        assert!(!skips_minor(&v("v1.29.5"), &v("v1.29.0")));
        assert!(skips_minor(&v("v1.29.5"), &v("v1.31.0")));
        assert!(skips_minor(&v("v1.29.5"), &v("v2.0.0")));
        assert!(is_downgrade(&v("v1.30.1"), &v("v1.30.0")));
        assert!(!is_downgrade(&v("v1.30.1"), &v("v1.30.1")));
        assert_eq!(kubelet_minor_skew(&v("v1.28.0")), 3);
        assert_eq!(kubelet_minor_skew(&v("v1.27.9")), 2);
        assert!(kubelet_within_skew(&v("v1.30.0"), &v("v1.27.3")));
        assert!(!kubelet_within_skew(&v("v1.30.0"), &v("v1.26.3")));
        assert!(!kubelet_within_skew(&v("v1.30.0"), &v("v1.31.0")));
        assert!(!kubelet_within_skew(&v("v1.27.0"), &v("v1.24.0")));
    }
}
