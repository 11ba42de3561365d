//! Conversions of the core kinds between v1beta1 and v1beta2 (the hub).

mod machinedrainrule;

pub use machinedrainrule::MachineDrainRuleConversion;
