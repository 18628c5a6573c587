//! The registry's resources: fixed URIs and templates, checked once, with
//! the fixed parts of `resources/list` and `resources/templates/list`
//! pre-serialized.

use rustc_hash::FxHashMap;
use serde::Serialize;

use super::problem::{RegistryProblem, sorted_unique};
use crate::resource::{ResourceDef, UriTemplate};

/// A resource template as the registry serves it: its definition and parsed template.
#[derive(Debug)]
pub struct RegisteredTemplate {
    /// The definition `#[mcp_resource]` emitted.
    pub def: &'static ResourceDef,
    /// The parsed template.
    pub template: UriTemplate,
}

/// The resources, sorted by URI.
#[derive(Debug, Default)]
pub(crate) struct Resources {
    pub(crate) fixed: Vec<&'static ResourceDef>,
    pub(crate) by_uri: FxHashMap<&'static str, usize>,
    pub(crate) templates: Vec<RegisteredTemplate>,
    /// The fixed resources' entries of `resources/list`, `[…]` members without brackets.
    pub(crate) fixed_entries: Box<[u8]>,
    /// `{"resourceTemplates":[…]}`.
    pub(crate) templates_list: Box<[u8]>,
}

/// The result of `resources/templates/list`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct TemplatesList<'a> {
    resource_templates: &'a [Entry<'a>],
}

/// One entry of `resources/list` or `resources/templates/list`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Entry<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    uri: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    uri_template: Option<&'a str>,
    name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    title: Option<&'a str>,
    #[serde(skip_serializing_if = "str::is_empty")]
    description: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    mime_type: Option<&'a str>,
}

impl<'a> Entry<'a> {
    fn of(def: &'a ResourceDef) -> Self {
        let (uri, uri_template) = if def.is_template() {
            (None, Some(def.uri))
        } else {
            (Some(def.uri), None)
        };
        Self {
            uri,
            uri_template,
            name: def.name,
            title: def.title,
            description: def.description,
            mime_type: def.mime_type,
        }
    }
}

impl Resources {
    /// Checks and sorts `defs`, pushing every problem into `problems`.
    pub(crate) fn build(
        defs: impl IntoIterator<Item = &'static ResourceDef>,
        problems: &mut Vec<RegistryProblem>,
    ) -> Self {
        let defs = sorted_unique(
            defs,
            |def: &ResourceDef| def.uri,
            |def| def.location,
            |uri, first, second| RegistryProblem::DuplicateUri { uri, first, second },
            problems,
        );
        let (templates, fixed): (Vec<_>, Vec<_>) = defs.into_iter().partition(|d| d.is_template());
        let templates: Vec<RegisteredTemplate> = templates
            .into_iter()
            .filter_map(|def| match UriTemplate::parse(def.uri) {
                Ok(template) => Some(RegisteredTemplate { def, template }),
                Err(error) => {
                    problems.push(RegistryProblem::BadTemplate {
                        template: def.uri,
                        at: def.location,
                        error,
                    });
                    None
                }
            })
            .collect();
        for template in &templates {
            for def in fixed
                .iter()
                .filter(|d| template.template.bind(d.uri).is_some())
            {
                problems.push(RegistryProblem::TemplateCollides {
                    template: template.def.uri,
                    template_at: template.def.location,
                    uri: def.uri,
                    uri_at: def.location,
                });
            }
        }
        let mut fixed_entries = Vec::new();
        for (i, def) in fixed.iter().enumerate() {
            if i > 0 {
                fixed_entries.push(b',');
            }
            serde_json::to_writer(&mut fixed_entries, &Entry::of(def)).expect("strings serialize");
        }
        let template_entries: Vec<Entry<'_>> = templates.iter().map(|t| Entry::of(t.def)).collect();
        let templates_list = serde_json::to_vec(&TemplatesList {
            resource_templates: &template_entries,
        })
        .expect("strings serialize")
        .into_boxed_slice();
        Self {
            by_uri: fixed.iter().enumerate().map(|(i, d)| (d.uri, i)).collect(),
            fixed,
            templates,
            fixed_entries: fixed_entries.into_boxed_slice(),
            templates_list,
        }
    }
}
