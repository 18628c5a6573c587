//! How the generated shim writes what a tool returns, chosen by trait.
//!
//! `(&&Probe::<R>::NEW).__kind()` resolves, by autoref specialization on the
//! concrete return type `R` (tools are never generic):
//!
//! 1. to [`IntoKind`] when `R: IntoToolResult` (`CallToolResult`,
//!    `PreparedResult`, `Result<CallToolResult, E>`, …);
//! 2. else to [`ResultKind`] when `R` is `Result<T, E>`: `Ok` as the JSON
//!    text of `T: Serialize`, `Err` as an `isError` result;
//! 3. else to [`ValueKind`]: `R: Serialize` as JSON text.
//!
//! The kinds' methods carry the real bounds (on [`ToolValue`] for values),
//! so a wrong type fails with one message at the user's return type.

// The kinds' methods take `self` and the value by value so that every kind
// has the same shape for the generated call, whichever the probe picks.
#![allow(clippy::unused_self, clippy::needless_pass_by_value)]

use core::marker::PhantomData;
use std::fmt::Display;

use serde::Serialize;

use crate::result::{IntoToolResult, ResultOut};
use crate::schema::{Schema, output_schema};

/// A value a `#[mcp_tool]` function can return as JSON text.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a `#[mcp_tool]` function",
    label = "not a tool result",
    note = "return a type that implements `serde::Serialize`, a `Result<T, E>` whose error implements `Display`, or an `ide_mcp_runtime::CallToolResult`"
)]
pub trait ToolValue: Serialize {}

#[diagnostic::do_not_recommend]
impl<T: Serialize> ToolValue for T {}

/// Marker naming the return type `R` of a tool.
pub struct Probe<R>(PhantomData<fn() -> R>);

impl<R> Probe<R> {
    /// The marker.
    pub const NEW: Self = Self(PhantomData);
}

impl<R> Clone for Probe<R> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<R> Copy for Probe<R> {}

/// Chosen first: the return type writes itself.
pub trait IntoTag<R> {
    /// The kind.
    fn __kind(&self) -> IntoKind<R>;
}

impl<R: IntoToolResult> IntoTag<R> for &Probe<R> {
    fn __kind(&self) -> IntoKind<R> {
        IntoKind(PhantomData)
    }
}

/// Chosen second: the return type is a `Result`.
pub trait ResultTag<T, E> {
    /// The kind.
    fn __kind(&self) -> ResultKind<T, E>;
}

impl<T, E> ResultTag<T, E> for Probe<Result<T, E>> {
    fn __kind(&self) -> ResultKind<T, E> {
        ResultKind(PhantomData)
    }
}

/// Chosen last: any other value.
pub trait ValueTag<R> {
    /// The kind.
    fn __kind(self) -> ValueKind<R>;
}

impl<R> ValueTag<R> for Probe<R> {
    fn __kind(self) -> ValueKind<R> {
        ValueKind(PhantomData)
    }
}

/// The methods of a kind whose structured content is the returned value
/// `R` itself ([`IntoKind`], [`ValueKind`]): the value, and the schema of `R`.
/// For a ready result (`IntoKind`) the `ToolValue` bound is what fails.
macro_rules! returned_as_itself {
    () => {
        /// The value as structured content.
        pub fn write_structured(self, value: R, out: &mut ResultOut<'_>)
        where
            R: ToolValue,
        {
            out.structured(&value);
        }

        /// The schema of `R`.
        pub fn output_schema(self) -> Schema
        where
            R: schemars::JsonSchema,
        {
            output_schema::<R>()
        }
    };
}

/// The return type implements `IntoToolResult`.
pub struct IntoKind<R>(PhantomData<fn() -> R>);

impl<R: IntoToolResult> IntoKind<R> {
    /// Writes the result.
    pub fn write(self, value: R, out: &mut ResultOut<'_>) {
        value.write_tool_result(out);
    }

    returned_as_itself!();
}

/// The return type is `Result<T, E>` with `T` a plain value.
pub struct ResultKind<T, E>(PhantomData<fn() -> (T, E)>);

impl<T, E> ResultKind<T, E> {
    /// `Ok` as JSON text, `Err` as an error result.
    pub fn write(self, value: Result<T, E>, out: &mut ResultOut<'_>)
    where
        T: ToolValue,
        E: Display,
    {
        match value {
            Ok(value) => out.json_text(&value),
            Err(err) => out.error_text(&err),
        }
    }

    /// `Ok` as structured content, `Err` as an error result.
    pub fn write_structured(self, value: Result<T, E>, out: &mut ResultOut<'_>)
    where
        T: ToolValue,
        E: Display,
    {
        match value {
            Ok(value) => out.structured(&value),
            Err(err) => out.error_text(&err),
        }
    }

    /// The schema of `T`.
    pub fn output_schema(self) -> Schema
    where
        T: schemars::JsonSchema,
    {
        output_schema::<T>()
    }
}

/// Any other return type.
pub struct ValueKind<R>(PhantomData<fn() -> R>);

impl<R> ValueKind<R> {
    /// The value as JSON text.
    pub fn write(self, value: R, out: &mut ResultOut<'_>)
    where
        R: ToolValue,
    {
        out.json_text(&value);
    }

    returned_as_itself!();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::CallToolResult;

    fn written(write: impl FnOnce(&mut ResultOut<'_>)) -> String {
        let mut buf = Vec::new();
        write(&mut ResultOut::new(&mut buf));
        String::from_utf8(buf).unwrap()
    }

    #[test]
    #[allow(clippy::needless_borrow)] // the borrows are what the generated code writes
    fn the_probe_picks_the_kind_by_trait() {
        let err: Result<u32, String> = Err("no".into());
        assert_eq!(
            written(|out| (&&Probe::<Result<u32, String>>::NEW)
                .__kind()
                .write(err, out)),
            r#"{"content":[{"type":"text","text":"no"}],"isError":true}"#
        );
        assert_eq!(
            written(|out| (&&Probe::<u32>::NEW).__kind().write(7, out)),
            r#"{"content":[{"type":"text","text":"7"}]}"#
        );
        let ready: Result<CallToolResult, String> = Ok(CallToolResult::text("t"));
        assert_eq!(
            written(|out| {
                (&&Probe::<Result<CallToolResult, String>>::NEW)
                    .__kind()
                    .write(ready, out);
            }),
            r#"{"content":[{"type":"text","text":"t"}]}"#
        );
    }
}
