//! drydock's end-to-end tests in one binary: one link instead of one per file, which keeps a
//! clean test build small and quick. Tests that read the process-wide controller metrics
//! (idle checks) keep a process of their own: `e2e_kcp`, `e2e_machineset`, `e2e_provider`,
//! `e2e_scale`.

mod bench_apiserver;
mod bench_chaos;
mod bench_clusterclass;
mod bench_compare;
mod bench_stores;
mod capi_manifests;
mod common;
mod crash_safety;
mod e2e_addons;
mod e2e_auth;
mod e2e_bootstrap_data;
mod e2e_cli;
mod e2e_day1;
mod e2e_dev_provider;
mod e2e_disk_full;
mod e2e_docker_provider;
mod e2e_etcd;
mod e2e_ipam;
mod e2e_kcp_remediation;
mod e2e_kcp_upgrade;
mod e2e_lifecycle;
mod e2e_logs;
mod e2e_machine;
mod e2e_machine_addresses;
mod e2e_machine_delete;
mod e2e_machine_pool;
mod e2e_mhc;
mod e2e_preflight;
mod e2e_propagation;
mod e2e_rbac;
mod e2e_rollout;
mod e2e_runtime_sdk;
mod e2e_split;
mod e2e_storage_versions;
mod e2e_topology;
mod e2e_topology_machine_pools;
mod e2e_v1beta2;
mod etcd_store;
mod repository;
