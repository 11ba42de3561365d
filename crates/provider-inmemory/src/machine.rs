//! (being written)

use std::sync::Arc;

use drydock_controllers::Running;

use crate::ProviderContext;

pub fn controller(pctx: &Arc<ProviderContext>) -> Running {
    let _ = pctx;
    Box::pin(async {})
}
