//! The schemas of an object's members, looked up in key order alongside the object (see
//! [`crate::ordered`]): a node's properties are sorted by name, so each lookup resumes where
//! the last one stopped instead of searching them again.

use std::cmp::Ordering;

use super::node::{Additional, Node};

/// The schemas of an object's members, asked for in ascending key order.
pub struct Children<'n> {
    node: &'n Node,
    next: usize,
}

impl<'n> Children<'n> {
    pub fn of(node: &'n Node) -> Self {
        Self { node, next: 0 }
    }

    /// As [`Node::child`]: the declared property `name`, or the map's value schema. Names
    /// must come in ascending order.
    pub fn child(&mut self, name: &str) -> Option<&'n Node> {
        let properties = &self.node.properties;
        while let Some((k, n)) = properties.get(self.next) {
            match k.as_str().cmp(name) {
                Ordering::Less => self.next += 1,
                Ordering::Equal => {
                    self.next += 1;
                    return Some(n);
                }
                Ordering::Greater => break,
            }
        }
        match &self.node.additional {
            Additional::Schema(s) => Some(s),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ascending_lookups_find_what_searches_find() {
        let node = Node {
            properties: vec![("a".into(), Node::default()), ("m".into(), Node { nullable: true, ..Node::default() })],
            additional: Additional::Schema(Box::new(Node { embedded: true, ..Node::default() })),
            ..Node::default()
        };
        let mut children = Children::of(&node);
        // Undeclared names get the map's value schema, declared ones their own.
        assert!(children.child("0").is_some_and(|n| n.embedded));
        assert!(children.child("a").is_some_and(|n| !n.embedded && !n.nullable));
        assert!(children.child("b").is_some_and(|n| n.embedded));
        assert!(children.child("m").is_some_and(|n| n.nullable));
        assert!(children.child("z").is_some_and(|n| n.embedded));
        let closed = Node { properties: vec![("a".into(), Node::default())], ..Node::default() };
        let mut children = Children::of(&closed);
        assert!(children.child("a").is_some());
        assert!(children.child("b").is_none());
    }
}
