//! The static token file of kube-apiserver's `--token-auth-file`: CSV lines
//! `token,user,uid,"group1,group2"` (groups optional).

use std::collections::HashMap;
use std::path::Path;

use anyhow::Context as _;

use super::UserInfo;

/// Users by bearer token.
#[derive(Clone, Debug, Default)]
pub struct StaticTokens(HashMap<String, UserInfo>);

impl StaticTokens {
    /// Reads the token file at `path`.
    pub fn read(path: &Path) -> anyhow::Result<Self> {
        let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        Self::parse(&text).with_context(|| format!("in the token file {}", path.display()))
    }

    /// Parses a token file: one `token,user,uid[,groups]` per line; blank lines and lines
    /// starting with `#` are skipped.
    pub fn parse(text: &str) -> anyhow::Result<Self> {
        let mut users = HashMap::new();
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let fields = split_csv(line);
            let [token, user, uid, rest @ ..] = fields.as_slice() else {
                anyhow::bail!("line {}: want token,user,uid[,\"group1,group2\"]", n + 1);
            };
            if token.is_empty() || user.is_empty() {
                anyhow::bail!("line {}: the token and the user name must not be empty", n + 1);
            }
            let groups = rest.first().map_or_else(Vec::new, |g| {
                g.split(',').map(str::trim).filter(|g| !g.is_empty()).map(str::to_string).collect()
            });
            if users.insert(token.clone(), UserInfo::new(user.clone(), uid.clone(), groups)).is_some() {
                anyhow::bail!("line {}: the token appears twice", n + 1);
            }
        }
        Ok(Self(users))
    }

    /// The user a bearer token names.
    pub fn user(&self, token: &str) -> Option<UserInfo> {
        self.0.get(token).cloned()
    }
}

/// Splits a CSV line, honouring double quotes (`""` inside quotes is one quote).
fn split_csv(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                chars.next();
                if let Some(f) = fields.last_mut() {
                    f.push('"');
                }
            }
            '"' => quoted = !quoted,
            ',' if !quoted => fields.push(String::new()),
            c => {
                if let Some(f) = fields.last_mut() {
                    f.push(c);
                }
            }
        }
    }
    fields.into_iter().map(|f| f.trim().to_string()).collect()
}
