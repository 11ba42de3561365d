//! `infrastructure.cluster.x-k8s.io` Docker kinds of upstream's Docker provider (CAPD, v1.14):
//! DockerCluster, DockerMachine, DockerMachinePool and their templates, in v1beta1 (served,
//! deprecated) and v1beta2 (stored). Upstream's e2e ClusterClasses and templates are written
//! on them. drydock runs no containers: it accepts them with a warning and simulates their
//! machines in memory, as it does a Dev object's docker backend.
//!
//! - [`v1beta1`], [`v1beta2`]: the kinds; a Docker spec is a Dev spec's `backend.docker`
//!   moved to the top, and the statuses are the Dev kinds'.
//! - [`conversion`]: between the two, through the Dev kinds' conversions.

mod admission;
pub mod conversion;
pub mod v1beta1;
pub mod v1beta2;

pub(crate) use admission::DockerAdmission;
