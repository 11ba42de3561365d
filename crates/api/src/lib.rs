//! drydock's API types: how a resource is described to the API server, admission
//! (defaulting and validation) with Kubernetes-style field errors, and the Cluster API kinds.
//!
//! Shared with the API server: [`names`] (apimachinery's name and label checks),
//! [`selector`] (label selectors) and [`tenancy`] (logical cluster names and paths, the keys
//! around them, kubeconfigs) and [`time`] (instants as objects write them).
//!
//! This crate does no I/O. The API server (`drydock-apiserver`) serves whatever
//! [`ResourceDef`]s it is given; controllers use the typed kinds through kube-rs.

pub mod admission;
pub mod capi;
pub mod components;
pub mod conversion;
pub mod names;
pub mod pki;
pub mod resource;
pub mod selector;
pub mod tenancy;
pub mod time;

pub use admission::{Admission, FieldError, FieldErrorKind, Operation};
pub use resource::{PrinterColumn, ResourceDef, ScaleDef};
