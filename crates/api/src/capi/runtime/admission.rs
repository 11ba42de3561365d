//! ExtensionConfig admission, as upstream's webhook: the namespace selector defaults to
//! one matching every namespace and a Service's port to 443; exactly one of `url` and
//! `service`, an `https` URL, a Service name and namespace that are DNS labels, an
//! absolute Service path, a valid port, a selector that parses and a `caBundle` that is
//! base64.

use base64::Engine;

use super::v1beta2::ExtensionConfig;
use super::{DEFAULT_SERVICE_PORT, ServiceReference};
use crate::admission::{FieldError, FieldPath};
use crate::capi::typed::KindAdmission;
use crate::{names, selector};

pub(crate) struct ExtensionConfigAdmission;

impl KindAdmission for ExtensionConfigAdmission {
    type Object = ExtensionConfig;

    fn default(&self, e: &mut ExtensionConfig, _old: Option<&ExtensionConfig>) -> Result<(), Vec<FieldError>> {
        e.spec.namespace_selector.get_or_insert_default();
        if let Some(s) = e.spec.client_config.service.as_mut() {
            s.port.get_or_insert(DEFAULT_SERVICE_PORT);
        }
        Ok(())
    }

    fn validate(&self, e: &ExtensionConfig, _old: Option<&ExtensionConfig>) -> Vec<FieldError> {
        let spec = FieldPath::new("spec");
        let path = spec.child("clientConfig");
        let cc = &e.spec.client_config;
        let mut errs = Vec::new();
        match (&cc.url, &cc.service) {
            (None, None) => errs.push(FieldError::required(path.as_str(), "either url or service must be defined")),
            (Some(_), Some(_)) => {
                errs.push(FieldError::forbidden(path.as_str(), "only one of url or service can be defined"))
            }
            _ => {}
        }
        if let Some(url) = &cc.url {
            errs.extend(url_error(url).map(|why| FieldError::invalid(path.child("url").as_str(), url.as_str(), why)));
        }
        if let Some(s) = &cc.service {
            errs.extend(service_errors(s, &path.child("service")));
        }
        if let Some(ca) = &cc.ca_bundle
            && base64::engine::general_purpose::STANDARD.decode(ca).is_err()
        {
            errs.push(FieldError::invalid(path.child("caBundle").as_str(), "<bytes>", "must be base64-encoded"));
        }
        match &e.spec.namespace_selector {
            Some(sel) => errs.extend(selector::validate(sel, &spec.child("namespaceSelector"))),
            None => errs.push(FieldError::required(spec.child("namespaceSelector").as_str(), "must be defined")),
        }
        errs
    }
}

/// Why `url` is no `https://host[...]` URL, if it is not.
fn url_error(url: &str) -> Option<String> {
    let Some((scheme, rest)) = url.split_once("://") else {
        return Some("must be a valid URL, e.g. https://example.com".into());
    };
    let host = rest.split(['/', '?', '#']).next().unwrap_or_default();
    if host.is_empty() || url.chars().any(char::is_whitespace) {
        return Some("must be a valid URL, e.g. https://example.com".into());
    }
    (scheme != "https").then(|| "'https' is the only allowed URL scheme, e.g. https://example.com".into())
}

fn service_errors(s: &ServiceReference, path: &FieldPath) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (field, value, problems) in [
        ("name", &s.name, names::dns1035_label_errors(&s.name)),
        ("namespace", &s.namespace, names::dns1123_label_errors(&s.namespace)),
    ] {
        if value.is_empty() {
            errs.push(FieldError::required(path.child(field).as_str(), "must not be empty"));
            continue;
        }
        errs.extend(problems.into_iter().map(|p| FieldError::invalid(path.child(field).as_str(), value.as_str(), p)));
    }
    if let Some(p) = s.path.as_deref().filter(|p| !p.starts_with('/')) {
        errs.push(FieldError::invalid(path.child("path").as_str(), p, "must start with \"/\" to be a valid URL path"));
    }
    if let Some(port) = s.port.filter(|p| !(1..=65535).contains(p)) {
        errs.push(FieldError::invalid(path.child("port").as_str(), port, "must be between 1 and 65535, inclusive"));
    }
    errs
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn config(client_config: serde_json::Value) -> ExtensionConfig {
        serde_json::from_value(json!({"metadata": {"name": "ext"}, "spec": {"clientConfig": client_config}}))
            .expect("config")
    }

    fn fields(e: &ExtensionConfig) -> Vec<String> {
        ExtensionConfigAdmission.validate(e, None).into_iter().map(|e| e.field).collect()
    }

    #[test]
    fn defaults_fill_the_selector_and_the_service_port() {
        let mut e = config(json!({"service": {"namespace": "ns", "name": "svc"}}));
        ExtensionConfigAdmission.default(&mut e, None).expect("defaulted");
        assert_eq!(e.spec.namespace_selector, Some(Default::default()));
        assert_eq!(e.spec.client_config.service.as_ref().and_then(|s| s.port), Some(443));
        assert!(fields(&e).is_empty(), "{:?}", fields(&e));
    }

    #[test]
    fn exactly_one_https_url_or_valid_service() {
        let admitted = |cc| {
            let mut e = config(cc);
            ExtensionConfigAdmission.default(&mut e, None).expect("defaulted");
            fields(&e)
        };
        assert!(admitted(json!({"url": "https://ext.example:8443/hooks", "caBundle": "Y2E="})).is_empty());
        assert_eq!(admitted(json!({})), ["spec.clientConfig"]);
        let both = json!({"url": "https://a", "service": {"namespace": "ns", "name": "svc"}});
        assert_eq!(admitted(both), ["spec.clientConfig"]);
        assert_eq!(admitted(json!({"url": "http://ext.example"})), ["spec.clientConfig.url"]);
        assert_eq!(admitted(json!({"url": "ext.example"})), ["spec.clientConfig.url"]);
        assert_eq!(admitted(json!({"url": "https://a", "caBundle": "%%%"})), ["spec.clientConfig.caBundle"]);
        let bad_service = json!({"service": {"namespace": "NS", "name": "1svc", "path": "hooks", "port": 70000}});
        assert_eq!(
            admitted(bad_service),
            [
                "spec.clientConfig.service.name",
                "spec.clientConfig.service.namespace",
                "spec.clientConfig.service.path",
                "spec.clientConfig.service.port"
            ]
        );
    }
}
