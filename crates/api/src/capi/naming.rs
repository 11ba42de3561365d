//! Machine naming strategies: templates such as `{{ .machineSet.name }}-{{ .random }}` that
//! name created Machines. Admission checks that a template uses only known variables,
//! contains `{{ .random }}` and renders to a valid object name.

use crate::admission::{FieldError, FieldPath};
use crate::names::dns1123_subdomain_errors;

/// The variable every naming template must contain, spelled exactly so.
pub const RANDOM_PLACEHOLDER: &str = "{{ .random }}";

/// Renders `template`, replacing `{{ .var }}` actions with values from `vars` (whitespace
/// inside the braces is free). Unknown variables and other template syntax are errors.
pub fn render(template: &str, vars: &[(&str, &str)]) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = template;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after.find("}}").ok_or_else(|| "unclosed action".to_string())?;
        let action = after[..end].trim();
        let name = action.strip_prefix('.').ok_or_else(|| format!("unsupported action {action:?}"))?;
        let value = vars
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| *v)
            .ok_or_else(|| format!("unknown variable \".{name}\""))?;
        out.push_str(value);
        rest = &after[end + 2..];
    }
    if rest.contains("}}") {
        return Err("unopened action".to_string());
    }
    out.push_str(rest);
    Ok(out)
}

/// Validates a naming template at `path` given the variables the owner offers (names of
/// the owner and cluster are filled with representative values for the name check).
pub fn validate_template(template: &str, vars: &[(&str, &str)], path: &FieldPath) -> Vec<FieldError> {
    if !template.contains(RANDOM_PLACEHOLDER) {
        return vec![FieldError::invalid(
            path.as_str(),
            template,
            format!("invalid template, {RANDOM_PLACEHOLDER} is missing"),
        )];
    }
    let mut all_vars: Vec<(&str, &str)> = vars.to_vec();
    // Five lowercase consonants/digits, like the generated suffix.
    all_vars.push(("random", "b2c4d"));
    match render(template, &all_vars) {
        Err(e) => vec![FieldError::invalid(path.as_str(), template, format!("invalid template: {e}"))],
        Ok(name) => dns1123_subdomain_errors(&name)
            .into_iter()
            .map(|e| {
                FieldError::invalid(
                    path.as_str(),
                    template,
                    format!("invalid template, generated names would not be valid names: {e}"),
                )
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_and_validates() {
        let vars = [("machineSet.name", "ms-1"), ("cluster.name", "c1")];
        assert_eq!(
            render("{{ .machineSet.name }}-{{.random}}", &[("machineSet.name", "a"), ("random", "x")]).unwrap(),
            "a-x"
        );
        assert!(render("{{ .nope }}", &vars).is_err());
        assert!(render("{{ .random ", &vars).is_err());
        let p = FieldPath::new("spec").child("machineNamingStrategy").child("template");
        assert!(validate_template("{{ .cluster.name }}-{{ .machineSet.name }}-{{ .random }}", &vars, &p).is_empty());
        assert_eq!(validate_template("{{ .machineSet.name }}", &vars, &p)[0].field, p.as_str());
        assert_eq!(validate_template("{{ .kubeadmControlPlane.name }}-{{ .random }}", &vars, &p).len(), 1);
        assert_eq!(validate_template("UPPER-{{ .random }}", &vars, &p).len(), 1);
    }
}
