//! Choosing, by trait, where each parameter of a tool comes from: the call
//! (a [`FromCall`] type) or the JSON arguments (any other type).
//!
//! The macro cannot see traits, so for a parameter of type `T` it emits
//! `(&Param::<T>::NEW).__param()`, which method resolution (autoref
//! specialization: tools are never generic, so `T` is concrete) resolves to
//! [`ExtractTag`] when `T: FromCall` and to [`ArgTag`] otherwise. Both give a
//! value with the same methods (`early`, `late`, `schema_into`, `states`),
//! so the generated code is the same whichever it is; [`ArgTag`] requires
//! `T: Argument`, so a type that is neither fails with the message of
//! [`Argument`] at the parameter.

use core::marker::PhantomData;

use super::args::{Arg, ArgsObject, Argument, ObjectSchema, argument};
use crate::context::StateReq;
use crate::extract::{Call, FromCall, Rejection};
use crate::result::Invalid;

/// Marker naming the type `T` of a parameter.
pub struct Param<T>(PhantomData<fn() -> T>);

impl<T> Param<T> {
    /// The marker.
    pub const NEW: Self = Self(PhantomData);
}

/// Chosen when `T` is taken from the call.
pub trait ExtractTag<'a, T> {
    /// The parameter's extractor.
    fn __param(&self) -> Extractor<'a, T>;
}

impl<'a, T: FromCall<'a>> ExtractTag<'a, T> for Param<T> {
    fn __param(&self) -> Extractor<'a, T> {
        extractor::<T>()
    }
}

/// Chosen for every other type: a JSON argument.
///
/// The bound is on the method, not on the impl: a type that is neither an
/// extractor nor an argument still resolves here, and fails with the
/// message of [`Argument`] at the parameter.
pub trait ArgTag<T> {
    /// The parameter as an argument.
    fn __param(&self) -> Arg<T>
    where
        T: Argument;
}

impl<T> ArgTag<T> for &Param<T> {
    fn __param(&self) -> Arg<T>
    where
        T: Argument,
    {
        argument::<T>()
    }
}

/// What a parameter taken from the call was decoded to before the call:
/// nothing, it is extracted in [`Extractor::late`].
pub struct Deferred;

/// A parameter taken from the call by `T::from_call`.
///
/// Function pointers taken under the bound of [`extractor`], so that the
/// methods need no bound: a wrong type is one error, at `extractor::<T>()`.
pub struct Extractor<'a, T> {
    from_call: fn(&Call<'a>) -> Result<T, Rejection>,
    required_states: fn(&mut Vec<StateReq>),
}

/// The [`Extractor`] of `T`; `const` so that statics can name it.
pub const fn extractor<'a, T: FromCall<'a>>() -> Extractor<'a, T> {
    Extractor {
        from_call: T::from_call,
        required_states: T::required_states,
    }
}

impl<'a, T> Extractor<'a, T> {
    /// Nothing to decode: the argument slot of this parameter is ignored.
    #[allow(clippy::unnecessary_wraps, clippy::unused_self)] // the same shape as `Arg::early`
    pub fn early<const N: usize>(
        self,
        _: &str,
        _: &ArgsObject<'_, N>,
        _: usize,
    ) -> Result<Deferred, Invalid> {
        Ok(Deferred)
    }

    /// Extracts the parameter from the call, when the tool runs.
    pub fn late(self, _: Deferred, call: &Call<'a>) -> Result<T, Rejection> {
        (self.from_call)(call)
    }

    /// An extracted parameter is no part of the input schema.
    #[allow(clippy::unused_self)] // the same shape as `Arg::schema_into`
    pub fn schema_into(
        self,
        schema: ObjectSchema,
        _: &str,
        _: Option<&str>,
        _: bool,
    ) -> ObjectSchema {
        schema
    }

    /// The states the extractor needs.
    pub fn states(self, states: &mut Vec<StateReq>) {
        (self.required_states)(states);
    }
}

impl<T> Clone for Extractor<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Extractor<'_, T> {}
