//! The error sink: every problem of one item is collected, then reported at once.

/// Collects `syn::Error`s; combined into one when the item has been fully read.
#[derive(Default)]
pub(crate) struct Errors {
    all: Option<syn::Error>,
    /// The attribute the messages name, when it is not `#[mcp_tool]`.
    attr: Option<&'static str>,
}

impl Errors {
    /// A sink whose messages name `attr` (`#[mcp_resource]`) where the
    /// shared rules say `#[mcp_tool]`.
    pub(crate) fn naming(attr: &'static str) -> Self {
        Self {
            all: None,
            attr: Some(attr).filter(|attr| *attr != "#[mcp_tool]"),
        }
    }

    pub(crate) fn push(&mut self, err: syn::Error) {
        match &mut self.all {
            Some(all) => all.combine(err),
            None => self.all = Some(err),
        }
    }

    fn message(&self, message: impl std::fmt::Display) -> String {
        let message = message.to_string();
        match self.attr {
            Some(attr) => message.replace("#[mcp_tool]", attr),
            None => message,
        }
    }

    /// An error at one span.
    pub(crate) fn at(&mut self, span: proc_macro2::Span, message: impl std::fmt::Display) {
        let message = self.message(message);
        self.push(syn::Error::new(span, message));
    }

    /// An error covering every token of `tokens`.
    pub(crate) fn spanned(
        &mut self,
        tokens: impl quote::ToTokens,
        message: impl std::fmt::Display,
    ) {
        let message = self.message(message);
        self.push(syn::Error::new_spanned(tokens, message));
    }

    /// `Err` with every collected error, if any.
    pub(crate) fn finish(self) -> syn::Result<()> {
        self.all.map_or(Ok(()), Err)
    }

    #[cfg(test)]
    pub(crate) fn messages(&self) -> Vec<String> {
        self.all
            .iter()
            .flat_map(|e| e.clone().into_iter().map(|e| e.to_string()))
            .collect()
    }
}
