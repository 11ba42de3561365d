//! Condition types and reasons of the v1beta2 conditions (`metav1.Condition`), as upstream
//! Cluster API v1.14 controllers set them. A type is the bare name; reasons follow
//! upstream's spelling. Names shared by several kinds are defined once.

// Types shared by several kinds.
pub const AVAILABLE: &str = "Available";
pub const READY: &str = "Ready";
pub const UP_TO_DATE: &str = "UpToDate";
pub const PAUSED: &str = "Paused";
pub const DELETING: &str = "Deleting";
pub const ROLLING_OUT: &str = "RollingOut";
pub const SCALING_UP: &str = "ScalingUp";
pub const SCALING_DOWN: &str = "ScalingDown";
pub const REMEDIATING: &str = "Remediating";
pub const MACHINES_READY: &str = "MachinesReady";
pub const MACHINES_UP_TO_DATE: &str = "MachinesUpToDate";
pub const INFRASTRUCTURE_READY: &str = "InfrastructureReady";
pub const BOOTSTRAP_CONFIG_READY: &str = "BootstrapConfigReady";

// Reasons shared by several kinds.
pub const PAUSED_REASON: &str = "Paused";
pub const NOT_PAUSED_REASON: &str = "NotPaused";
pub const NOT_DELETING_REASON: &str = "NotDeleting";
pub const DELETING_REASON: &str = "Deleting";
pub const DELETION_COMPLETED_REASON: &str = "DeletionCompleted";
pub const INTERNAL_ERROR_REASON: &str = "InternalError";
pub const NO_REPLICAS_REASON: &str = "NoReplicas";
pub const WAITING_FOR_REPLICAS_SET_REASON: &str = "WaitingForReplicasSet";
pub const READY_REASON: &str = "Ready";
pub const NOT_READY_REASON: &str = "NotReady";
pub const READY_UNKNOWN_REASON: &str = "ReadyUnknown";
pub const AVAILABLE_REASON: &str = "Available";
pub const NOT_AVAILABLE_REASON: &str = "NotAvailable";
pub const AVAILABLE_UNKNOWN_REASON: &str = "AvailableUnknown";
pub const UP_TO_DATE_REASON: &str = "UpToDate";
pub const NOT_UP_TO_DATE_REASON: &str = "NotUpToDate";
pub const UP_TO_DATE_UNKNOWN_REASON: &str = "UpToDateUnknown";
pub const ROLLING_OUT_REASON: &str = "RollingOut";
pub const NOT_ROLLING_OUT_REASON: &str = "NotRollingOut";
pub const SCALING_UP_REASON: &str = "ScalingUp";
pub const NOT_SCALING_UP_REASON: &str = "NotScalingUp";
pub const SCALING_DOWN_REASON: &str = "ScalingDown";
pub const NOT_SCALING_DOWN_REASON: &str = "NotScalingDown";
pub const REMEDIATING_REASON: &str = "Remediating";
pub const NOT_REMEDIATING_REASON: &str = "NotRemediating";
/// Of a provider object's `InfrastructureReady`/`BootstrapConfigReady` mirror.
pub const INVALID_CONDITION_REPORTED_REASON: &str = "InvalidConditionReported";
pub const OBJECT_DOES_NOT_EXIST_REASON: &str = "ObjectDoesNotExist";
pub const OBJECT_DELETED_REASON: &str = "ObjectDeleted";
pub const INSPECTION_FAILED_REASON: &str = "InspectionFailed";
pub const CONNECTION_DOWN_REASON: &str = "ConnectionDown";

// Machine.
pub const NODE_READY: &str = "NodeReady";
pub const NODE_HEALTHY: &str = "NodeHealthy";
pub const UPDATING: &str = "Updating";
pub const HEALTH_CHECK_SUCCEEDED: &str = "HealthCheckSucceeded";
pub const OWNER_REMEDIATED: &str = "OwnerRemediated";
pub const DATA_SECRET_PROVIDED_REASON: &str = "DataSecretProvided";
pub const WAITING_FOR_MIN_READY_SECONDS_REASON: &str = "WaitingForMinReadySeconds";
pub const NOT_UPDATING_REASON: &str = "NotUpdating";
pub const NODE_READY_REASON: &str = "NodeReady";
pub const NODE_NOT_READY_REASON: &str = "NodeNotReady";
pub const NODE_READY_UNKNOWN_REASON: &str = "NodeReadyUnknown";
pub const NODE_HEALTHY_REASON: &str = "NodeHealthy";
pub const NODE_NOT_HEALTHY_REASON: &str = "NodeNotHealthy";
pub const NODE_HEALTHY_UNKNOWN_REASON: &str = "NodeHealthyUnknown";
pub const NODE_DOES_NOT_EXIST_REASON: &str = "NodeDoesNotExist";
pub const NODE_DELETED_REASON: &str = "NodeDeleted";
pub const WAITING_FOR_PRE_DRAIN_HOOK_REASON: &str = "WaitingForPreDrainHook";
pub const DRAINING_NODE_REASON: &str = "DrainingNode";
pub const WAITING_FOR_VOLUME_DETACH_REASON: &str = "WaitingForVolumeDetach";
pub const WAITING_FOR_PRE_TERMINATE_HOOK_REASON: &str = "WaitingForPreTerminateHook";
pub const WAITING_FOR_INFRASTRUCTURE_DELETION_REASON: &str = "WaitingForInfrastructureDeletion";
pub const WAITING_FOR_BOOTSTRAP_DELETION_REASON: &str = "WaitingForBootstrapDeletion";
pub const DELETING_NODE_REASON: &str = "DeletingNode";
pub const HEALTH_CHECK_SUCCEEDED_REASON: &str = "HealthCheckSucceeded";
pub const UNHEALTHY_NODE_REASON: &str = "UnhealthyNode";
pub const UNHEALTHY_MACHINE_REASON: &str = "UnhealthyMachine";
pub const NODE_STARTUP_TIMEOUT_REASON: &str = "NodeStartupTimeout";
pub const HAS_REMEDIATE_ANNOTATION_REASON: &str = "HasRemediateAnnotation";
pub const WAITING_FOR_REMEDIATION_REASON: &str = "WaitingForRemediation";

// MachineDeployment.
pub const WAITING_FOR_AVAILABLE_REPLICAS_SET_REASON: &str = "WaitingForAvailableReplicasSet";

// MachineSet (its reasons on a Machine's `OwnerRemediated`).
pub const MACHINE_DELETING_REASON: &str = "MachineDeleting";
pub const REMEDIATION_DEFERRED_REASON: &str = "RemediationDeferred";

// KubeadmControlPlane.
pub const INITIALIZED: &str = "Initialized";
pub const CERTIFICATES_AVAILABLE: &str = "CertificatesAvailable";
pub const ETCD_CLUSTER_HEALTHY: &str = "EtcdClusterHealthy";
pub const CONTROL_PLANE_COMPONENTS_HEALTHY: &str = "ControlPlaneComponentsHealthy";
pub const INITIALIZED_REASON: &str = "Initialized";
pub const NOT_INITIALIZED_REASON: &str = "NotInitialized";
pub const HEALTHY_REASON: &str = "Healthy";
pub const NOT_HEALTHY_REASON: &str = "NotHealthy";
pub const HEALTH_UNKNOWN_REASON: &str = "HealthUnknown";
pub const WAITING_FOR_WORKERS_DELETION_REASON: &str = "WaitingForWorkersDeletion";
pub const WAITING_FOR_MACHINE_DELETION_REASON: &str = "WaitingForMachineDeletion";
/// Set by the control plane on each of its Machines.
pub const API_SERVER_POD_HEALTHY: &str = "APIServerPodHealthy";
pub const CONTROLLER_MANAGER_POD_HEALTHY: &str = "ControllerManagerPodHealthy";
pub const SCHEDULER_POD_HEALTHY: &str = "SchedulerPodHealthy";
pub const ETCD_POD_HEALTHY: &str = "EtcdPodHealthy";
pub const ETCD_MEMBER_HEALTHY: &str = "EtcdMemberHealthy";
pub const POD_RUNNING_REASON: &str = "Running";
pub const POD_PROVISIONING_REASON: &str = "Provisioning";
pub const POD_DOES_NOT_EXIST_REASON: &str = "DoesNotExist";
pub const POD_FAILED_REASON: &str = "Failed";

// KubeadmConfig.
pub const DATA_SECRET_AVAILABLE: &str = "DataSecretAvailable";

// Cluster.
pub const CONTROL_PLANE_INITIALIZED: &str = "ControlPlaneInitialized";
pub const CONTROL_PLANE_AVAILABLE: &str = "ControlPlaneAvailable";
pub const WORKERS_AVAILABLE: &str = "WorkersAvailable";
pub const CONTROL_PLANE_MACHINES_READY: &str = "ControlPlaneMachinesReady";
pub const WORKER_MACHINES_READY: &str = "WorkerMachinesReady";
pub const CONTROL_PLANE_MACHINES_UP_TO_DATE: &str = "ControlPlaneMachinesUpToDate";
pub const WORKER_MACHINES_UP_TO_DATE: &str = "WorkerMachinesUpToDate";
pub const REMOTE_CONNECTION_PROBE: &str = "RemoteConnectionProbe";
pub const TOPOLOGY_RECONCILED: &str = "TopologyReconciled";
/// ClusterClass: every variable's definitions are known.
pub const VARIABLES_READY: &str = "VariablesReady";
pub const VARIABLES_READY_REASON: &str = "VariablesReady";
pub const VARIABLE_DISCOVERY_FAILED_REASON: &str = "VariableDiscoveryFailed";
/// ClusterClass: every template reference names the version its provider's contract lists.
pub const REF_VERSIONS_UP_TO_DATE: &str = "RefVersionsUpToDate";
pub const REF_VERSIONS_UP_TO_DATE_REASON: &str = "RefVersionsUpToDate";
pub const REF_VERSIONS_NOT_UP_TO_DATE_REASON: &str = "RefVersionsNotUpToDate";
pub const NO_WORKERS_REASON: &str = "NoWorkers";
pub const PROBE_SUCCEEDED_REASON: &str = "ProbeSucceeded";
pub const PROBE_FAILED_REASON: &str = "ProbeFailed";
pub const WAITING_FOR_BEFORE_DELETE_HOOK_REASON: &str = "WaitingForBeforeDeleteHook";
pub const WAITING_FOR_CONTROL_PLANE_DELETION_REASON: &str = "WaitingForControlPlaneDeletion";
pub const ROLLING_OUT_UNKNOWN_REASON: &str = "RollingOutUnknown";
pub const SCALING_UP_UNKNOWN_REASON: &str = "ScalingUpUnknown";
pub const SCALING_DOWN_UNKNOWN_REASON: &str = "ScalingDownUnknown";

// MachineHealthCheck.
pub const REMEDIATION_ALLOWED: &str = "RemediationAllowed";
pub const REMEDIATION_ALLOWED_REASON: &str = "RemediationAllowed";
pub const TOO_MANY_UNHEALTHY_REASON: &str = "TooManyUnhealthy";

// ExtensionConfig.
pub const DISCOVERED: &str = "Discovered";
pub const DISCOVERED_REASON: &str = "Discovered";
pub const NOT_DISCOVERED_REASON: &str = "NotDiscovered";

// ClusterResourceSet.
pub const RESOURCES_APPLIED: &str = "ResourcesApplied";
pub const APPLIED_REASON: &str = "Applied";
pub const NOT_APPLIED_REASON: &str = "NotApplied";
pub const WRONG_SECRET_TYPE_REASON: &str = "WrongSecretType";
