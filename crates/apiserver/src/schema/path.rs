//! Field paths built on the stack while walking and rendered only when an error needs one,
//! so a clean write allocates no path strings.

use std::fmt::Write;

/// One step of a field path, pointing at its parent.
#[derive(Clone, Copy, Debug)]
pub enum Path<'a> {
    Root(&'a str),
    Child(&'a Path<'a>, &'a str),
    Key(&'a Path<'a>, &'a str),
    Index(&'a Path<'a>, usize),
}

impl<'a> Path<'a> {
    pub const ROOT: Path<'static> = Path::Root("");

    /// `parent.name`.
    pub fn child(&'a self, name: &'a str) -> Path<'a> {
        Path::Child(self, name)
    }

    /// `parent[key]`.
    pub fn key(&'a self, key: &'a str) -> Path<'a> {
        Path::Key(self, key)
    }

    /// `parent[i]`.
    pub fn index(&'a self, i: usize) -> Path<'a> {
        Path::Index(self, i)
    }

    pub fn render(&self) -> String {
        let mut out = String::new();
        self.write(&mut out);
        out
    }

    fn write(&self, out: &mut String) {
        match self {
            Path::Root(r) => out.push_str(r),
            Path::Child(p, name) => {
                p.write(out);
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(name);
            }
            Path::Key(p, k) => {
                p.write(out);
                let _ = write!(out, "[{k}]");
            }
            Path::Index(p, i) => {
                p.write(out);
                let _ = write!(out, "[{i}]");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_like_apimachinery() {
        let root = Path::ROOT;
        let spec = root.child("spec");
        let items = spec.child("items");
        let first = items.index(3);
        let key = first.key("a.b");
        assert_eq!(key.render(), "spec.items[3][a.b]");
        let named = Path::Root("spec.versions[0].schema.openAPIV3Schema");
        assert_eq!(named.child("type").render(), "spec.versions[0].schema.openAPIV3Schema.type");
    }
}
