//! RFC 6901 JSON pointers and the edits inline patches make at them (`add`, `replace`,
//! `remove`), with the parent creation upstream's JSON patch library does on `add`.

use serde_json::{Map, Value};

/// RFC 6901: `""` is the whole document, else `/`-separated tokens with `~1` for `/` and
/// `~0` for `~`.
pub fn pointer_tokens(path: &str) -> Result<Vec<String>, String> {
    if path.is_empty() {
        return Ok(Vec::new());
    }
    let Some(rest) = path.strip_prefix('/') else {
        return Err("a path must be empty or start with \"/\"".into());
    };
    rest.split('/')
        .map(|token| {
            let mut out = String::with_capacity(token.len());
            let mut chars = token.chars();
            while let Some(c) = chars.next() {
                if c != '~' {
                    out.push(c);
                    continue;
                }
                match chars.next() {
                    Some('0') => out.push('~'),
                    Some('1') => out.push('/'),
                    _ => return Err(format!("invalid escape in {token:?}: \"~\" must be followed by 0 or 1")),
                }
            }
            Ok(out)
        })
        .collect()
}

/// An array position: a decimal index without leading zeros, below `len` (or equal to it, or
/// `-`, when appending).
pub fn array_index(token: &str, len: usize, appending: bool) -> Result<usize, String> {
    if appending && token == "-" {
        return Ok(len);
    }
    let well_formed =
        !token.is_empty() && token.bytes().all(|b| b.is_ascii_digit()) && (token == "0" || !token.starts_with('0'));
    match token.parse::<usize>() {
        Ok(i) if well_formed && (i < len || (appending && i == len)) => Ok(i),
        Ok(_) if well_formed => Err(format!("index {token} is out of range (array length {len})")),
        _ => Err(format!("{token:?} is not an array index")),
    }
}

/// The container the last token is in. For `add` (`create`), missing or null intermediate
/// values become objects, or arrays when the next token is an index, as upstream's
/// JSON patch library does with `EnsurePathExistsOnAdd`.
fn parent<'v>(doc: &'v mut Value, tokens: &[String], create: bool) -> Result<&'v mut Value, String> {
    let mut cur = doc;
    let steps = tokens.len().saturating_sub(1);
    for (i, token) in tokens.iter().take(steps).enumerate() {
        cur = match cur {
            Value::Object(map) => {
                if create && map.get(token).is_none_or(Value::is_null) {
                    let next = tokens.get(i + 1).map(String::as_str).unwrap_or_default();
                    let index_next = next == "-" || (!next.is_empty() && next.bytes().all(|b| b.is_ascii_digit()));
                    let empty = if index_next { Value::Array(Vec::new()) } else { Value::Object(Map::new()) };
                    map.insert(token.clone(), empty);
                }
                map.get_mut(token).ok_or_else(|| format!("missing {token:?}"))?
            }
            Value::Array(items) => {
                let idx = array_index(token, items.len(), false)?;
                items.get_mut(idx).ok_or_else(|| format!("missing index {idx}"))?
            }
            _ => return Err(format!("{token:?} is inside a value that is neither an object nor an array")),
        };
    }
    Ok(cur)
}

/// `add` (`adding`) or `replace` the value at `tokens`, or `remove` it (no value).
pub fn edit(doc: &mut Value, adding: bool, tokens: &[String], value: Option<Value>) -> Result<(), String> {
    let Some(last) = tokens.last() else {
        *doc = value.ok_or("cannot remove the whole object")?;
        return Ok(());
    };
    match (parent(doc, tokens, adding)?, value) {
        (Value::Object(map), Some(v)) if adding => drop(map.insert(last.clone(), v)),
        (Value::Object(map), Some(v)) => {
            *map.get_mut(last).ok_or_else(|| format!("missing {last:?}: replace needs an existing value"))? = v;
        }
        (Value::Object(map), None) => {
            drop(map.remove(last).ok_or_else(|| format!("missing {last:?}: nothing to remove"))?)
        }
        (Value::Array(items), value) => {
            let idx = array_index(last, items.len(), adding)?;
            match value {
                Some(v) if adding => items.insert(idx, v),
                Some(v) => items[idx] = v,
                None => drop(items.remove(idx)),
            }
        }
        _ => return Err(format!("{last:?} is inside a value that is neither an object nor an array")),
    }
    Ok(())
}
