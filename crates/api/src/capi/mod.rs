//! The Cluster API kinds, served with upstream's groups, versions and field names.
