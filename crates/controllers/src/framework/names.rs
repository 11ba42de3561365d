//! Generated object names: `<base>-<random suffix>`, kept within the 63 characters of a
//! label value.

/// Characters of generated name suffixes: lowercase alphanumerics without vowels and
/// look-alikes, so a suffix never spells a word (Kubernetes' generateName alphabet).
const SUFFIX_ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
/// Length of the random suffix of generated names.
pub const SUFFIX_LEN: usize = 5;
/// Longest prefix kept before the suffix, so generated names stay valid label values.
const MAX_PREFIX_LEN: usize = 58;

/// A random suffix for generated names.
pub fn random_suffix() -> String {
    (0..SUFFIX_LEN)
        .map(|_| {
            let i = rand::random_range(0..SUFFIX_ALPHABET.len());
            char::from(SUFFIX_ALPHABET[i])
        })
        .collect()
}

/// `<base>-` cut to 58 characters, then `suffix`: at most 63 characters.
pub fn generated_name(base: &str, suffix: &str) -> String {
    let mut prefix = format!("{base}-");
    if prefix.len() > MAX_PREFIX_LEN {
        let mut cut = MAX_PREFIX_LEN;
        while !prefix.is_char_boundary(cut) {
            cut -= 1;
        }
        prefix.truncate(cut);
    }
    prefix + suffix
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(random_suffix().len(), SUFFIX_LEN);
        assert!(random_suffix().bytes().all(|b| SUFFIX_ALPHABET.contains(&b)));
        assert_eq!(generated_name("ms", "xyz12"), "ms-xyz12");
        let long = "a".repeat(70);
        let n = generated_name(&long, "xyz12");
        assert_eq!(n.len(), 63);
        assert!(n.ends_with("aaa-xyz12") || n.ends_with("aaaaxyz12"));
    }
}
