//! Printing tables the way kubectl does: upper-case headers, columns padded with three
//! spaces, `<none>` for empty cells.

/// Renders rows (first row = header) with kubectl's spacing.
pub fn render(rows: &[Vec<String>]) -> String {
    let cols = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> =
        (0..cols).map(|c| rows.iter().map(|r| r.get(c).map_or(0, |s| s.chars().count())).max().unwrap_or(0)).collect();
    let mut out = String::new();
    for r in rows {
        let mut line = String::new();
        for (c, cell) in r.iter().enumerate() {
            if c + 1 == r.len() {
                line.push_str(cell);
            } else {
                line.push_str(&format!("{cell:<w$}   ", w = widths[c]));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// A server-side Table (`meta.k8s.io/v1`) as text; `wide` includes priority > 0 columns.
pub fn from_server_table(t: &serde_json::Value, wide: bool, with_namespace: bool) -> String {
    let defs = t["columnDefinitions"].as_array().cloned().unwrap_or_default();
    let keep: Vec<usize> = defs
        .iter()
        .enumerate()
        .filter(|(_, d)| wide || d["priority"].as_i64().unwrap_or(0) == 0)
        .map(|(i, _)| i)
        .collect();
    let mut header: Vec<String> = Vec::new();
    if with_namespace {
        header.push("NAMESPACE".into());
    }
    header.extend(keep.iter().map(|i| defs[*i]["name"].as_str().unwrap_or_default().to_ascii_uppercase()));
    let mut rows = vec![header];
    for row in t["rows"].as_array().into_iter().flatten() {
        let mut r = Vec::new();
        if with_namespace {
            r.push(row["object"]["metadata"]["namespace"].as_str().unwrap_or_default().to_string());
        }
        for i in &keep {
            let cell = &row["cells"][*i];
            r.push(match cell {
                serde_json::Value::Null => String::new(),
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            });
        }
        rows.push(r);
    }
    if rows.len() == 1 {
        return String::new();
    }
    render(&rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pads_like_kubectl() {
        let out = render(&[vec!["NAME".into(), "AGE".into()], vec!["longer-name".into(), "5m".into()]]);
        assert_eq!(out, "NAME          AGE\nlonger-name   5m\n");
    }
}
