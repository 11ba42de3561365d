//! The schemas of an object's members, looked up in key order alongside the object (see
//! [`crate::ordered`]): a node's properties are sorted by name, so each lookup resumes where
//! the last one stopped instead of searching them again.

use super::node::Node;
use crate::ordered::Ascending;

type Properties<'n> = std::iter::Map<std::slice::Iter<'n, (String, Node)>, fn(&(String, Node)) -> (&String, &Node)>;

/// The schemas of an object's members, asked for in ascending key order.
pub struct Children<'n> {
    node: &'n Node,
    properties: Ascending<'n, &'n Node, Properties<'n>>,
}

impl<'n> Children<'n> {
    pub fn of(node: &'n Node) -> Self {
        let split: fn(&(String, Node)) -> (&String, &Node) = |(k, n)| (k, n);
        Self { node, properties: Ascending::new(Some(node.properties.iter().map(split))) }
    }

    /// As [`Node::child`]: the declared property `name`, or the map's value schema. Names
    /// must come in ascending order.
    pub fn child(&mut self, name: &str) -> Option<&'n Node> {
        self.properties.get(name).or(self.node.values())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::node::Additional;

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
