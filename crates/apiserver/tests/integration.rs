//! The API server's integration tests in one binary: one link instead of one per file.

mod bad_input;
mod builtin_kinds;
mod common;
mod crds;
mod group_commit;
mod kube_apply;
mod kube_client;
mod kube_general;
mod kube_metadata;
mod kubectl;
mod kubectl_apply_matrix;
mod kubectl_matrix;
mod native_conversion;
mod openapi;
mod protobuf;
mod python_client;
mod read_only;
mod schema_validation;
mod semantics;
mod server_side_apply;
mod storage_semantics;
mod token_cleaner;
