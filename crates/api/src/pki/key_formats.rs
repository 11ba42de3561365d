//! Private keys in the PEM forms other tools write, made PKCS#8 (the one form the signing
//! code reads): `RSA PRIVATE KEY` (PKCS#1, what upstream Cluster API and kubeadm write for
//! RSA keys) and `EC PRIVATE KEY` (SEC1, Go's and OpenSSL's form for ECDSA keys).

use super::PkiError;

/// rsaEncryption (1.2.840.113549.1.1.1), as a DER OID.
const RSA_ENCRYPTION: &[u8] = &[0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01];
/// id-ecPublicKey (1.2.840.10045.2.1), as a DER OID.
const EC_PUBLIC_KEY: &[u8] = &[0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01];
const SEQUENCE: u8 = 0x30;
const INTEGER: u8 = 0x02;
const OCTET_STRING: u8 = 0x04;
const NULL: &[u8] = &[0x05, 0x00];
/// `[0]`: the curve parameters of a SEC1 key.
const PARAMETERS: u8 = 0xa0;

/// `key_pem` as a PKCS#8 PEM (unchanged when it already is one).
pub fn to_pkcs8_pem(key_pem: &str) -> Result<String, PkiError> {
    let what = "reading a private key";
    let (_, pem) = x509_parser::pem::parse_x509_pem(key_pem.as_bytes()).map_err(|e| PkiError::new(what, e))?;
    let der = match pem.label.as_str() {
        "PRIVATE KEY" => return Ok(key_pem.to_string()),
        "RSA PRIVATE KEY" => pkcs8(&[RSA_ENCRYPTION, NULL].concat(), &pem.contents),
        "EC PRIVATE KEY" => ec_to_pkcs8(&pem.contents).ok_or_else(|| PkiError::new(what, "a malformed EC key"))?,
        other => return Err(PkiError::new(what, format!("a {other:?} PEM block is not a private key"))),
    };
    Ok(pem_text("PRIVATE KEY", &der))
}

/// PKCS#8 `PrivateKeyInfo` of `key` with the algorithm identifier's contents `algorithm`.
fn pkcs8(algorithm: &[u8], key: &[u8]) -> Vec<u8> {
    tlv(SEQUENCE, &[tlv(INTEGER, &[0]), tlv(SEQUENCE, algorithm), tlv(OCTET_STRING, key)].concat())
}

/// A SEC1 `ECPrivateKey` as PKCS#8: its curve moves into the algorithm identifier.
fn ec_to_pkcs8(sec1: &[u8]) -> Option<Vec<u8>> {
    let (tag, body, _, _) = read_tlv(sec1)?;
    if tag != SEQUENCE {
        return None;
    }
    let (mut rest, mut kept, mut curve) = (body, Vec::new(), None);
    while !rest.is_empty() {
        let (tag, content, whole, next) = read_tlv(rest)?;
        if tag == PARAMETERS {
            curve = Some(content);
        } else {
            kept.extend_from_slice(whole);
        }
        rest = next;
    }
    Some(pkcs8(&[EC_PUBLIC_KEY, curve?].concat(), &tlv(SEQUENCE, &kept)))
}

/// A DER element: its tag, contents and whole encoding, and what follows it.
type Element<'a> = (u8, &'a [u8], &'a [u8], &'a [u8]);

/// The DER element `input` starts with.
fn read_tlv(input: &[u8]) -> Option<Element<'_>> {
    let (&tag, rest) = input.split_first()?;
    let (&first, rest) = rest.split_first()?;
    let (len, rest) = if first < 0x80 {
        (usize::from(first), rest)
    } else {
        let n = usize::from(first & 0x7f);
        if n == 0 || n > 4 || rest.len() < n {
            return None;
        }
        (rest[..n].iter().fold(0usize, |acc, b| (acc << 8) | usize::from(*b)), &rest[n..])
    };
    if rest.len() < len {
        return None;
    }
    let header = input.len() - rest.len();
    Some((tag, &rest[..len], &input[..header + len], &rest[len..]))
}

fn tlv(tag: u8, content: &[u8]) -> Vec<u8> {
    let mut out = vec![tag];
    match u8::try_from(content.len()) {
        Ok(n) if n < 0x80 => out.push(n),
        _ => {
            let bytes: Vec<u8> = content.len().to_be_bytes().into_iter().skip_while(|b| *b == 0).collect();
            out.push(0x80 | bytes.len() as u8);
            out.extend(bytes);
        }
    }
    out.extend_from_slice(content);
    out
}

fn pem_text(label: &str, der: &[u8]) -> String {
    use base64::Engine as _;
    let b64 = base64::engine::general_purpose::STANDARD.encode(der);
    let lines: Vec<&str> = b64.as_bytes().chunks(64).map(|c| std::str::from_utf8(c).unwrap_or_default()).collect();
    format!("-----BEGIN {label}-----\n{}\n-----END {label}-----\n", lines.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn der_lengths_round_trip() {
        for len in [0, 1, 127, 128, 255, 256, 70_000] {
            let content = vec![7u8; len];
            let encoded = tlv(OCTET_STRING, &content);
            let (tag, body, whole, rest) = read_tlv(&encoded).expect("reads");
            assert_eq!((tag, body.len(), whole.len(), rest.len()), (OCTET_STRING, len, encoded.len(), 0));
        }
        assert!(read_tlv(&[0x04, 0x05, 1, 2]).is_none(), "shorter than its length");
    }

    #[test]
    fn pkcs8_is_left_alone_and_other_blocks_are_refused() {
        let key = super::super::key_pair().expect("key").key_pem;
        assert_eq!(to_pkcs8_pem(&key).expect("PKCS#8"), key);
        let cert = super::super::Authority::generate("x").expect("CA").cert_pem().to_string();
        assert!(to_pkcs8_pem(&cert).expect_err("a certificate").to_string().contains("not a private key"));
    }
}
