//! The body of a sync tool's call shim, generic over its parameters: the
//! generated shim names each parameter's source once, in a tuple, and
//! calls [`sync_params`], instantiated once per tuple of parameter types
//! (shared by every tool of the same parameters), instead of a body
//! expanded by hand in each tool. Up to 12 parameters; the macro expands
//! the body of a longer tool, and of an async tool, by hand.
//!
//! The steps and their order are those of the hand-expanded body of an
//! async tool: the arguments object is split, every parameter decoded
//! (`early`), then every extractor run (`late`); the first failure stops
//! them, and is the shim's outcome.

use super::args::{Arg, ArgsObject, ObjectSchema};
use super::params::{Deferred, Extractor};
use crate::context::StateReq;
use crate::extract::Call;
use crate::result::{Invalid, Outcome, ResultOut};
use crate::schema::Schema;
use crate::tool::{Arguments, CallOutcome};

/// Where the shim takes the arguments from.
pub struct Input<'s, 'a, const N: usize> {
    tool: &'s str,
    args: Option<Arguments<'a>>,
    fields: ArgsObject<'a, N>,
}

/// One parameter of a sync tool, as [`sync_params`] takes it.
pub trait Step<'c> {
    /// What the parameter decodes to before the call.
    type Early;
    /// The parameter's value.
    type Value;
    /// Decodes the parameter.
    fn early<const N: usize>(&self, input: &Input<'_, '_, N>) -> Result<Self::Early, Invalid>;
    /// Takes the value.
    fn late(&self, early: Self::Early, call: &Call<'c>) -> Result<Self::Value, Invalid>;
}

/// The argument (or extractor, as the probe chose) `source` at `slot` of
/// the arguments object.
pub struct Slot<S> {
    source: S,
    slot: usize,
}

/// The parameter at `slot` of the arguments object: an [`Arg`] or an [`Extractor`].
pub const fn slot<S>(source: S, slot: usize) -> Slot<S> {
    Slot { source, slot }
}

impl<'c, T> Step<'c> for Slot<Arg<T>> {
    type Early = T;
    type Value = T;
    #[inline]
    fn early<const N: usize>(&self, input: &Input<'_, '_, N>) -> Result<T, Invalid> {
        self.source.early(input.tool, &input.fields, self.slot)
    }
    #[inline]
    fn late(&self, value: T, _: &Call<'c>) -> Result<T, Invalid> {
        Ok(value)
    }
}

impl<'c, T> Step<'c> for Slot<Extractor<'c, T>> {
    type Early = Deferred;
    type Value = T;
    #[inline]
    fn early<const N: usize>(&self, _: &Input<'_, '_, N>) -> Result<Deferred, Invalid> {
        Ok(Deferred)
    }
    #[inline]
    fn late(&self, _: Deferred, call: &Call<'c>) -> Result<T, Invalid> {
        super::reply::rejected(self.source.late(Deferred, call))
    }
}

/// An argument at `slot`, `T::default()` when absent (`#[arg(default)]`).
pub struct SlotOrDefault<T> {
    source: Arg<T>,
    slot: usize,
    default: fn() -> T,
}

/// The argument at `slot` of the arguments object, `T::default()` when absent.
///
/// The bound is here, spanned on the parameter by the generated code.
pub fn slot_or_default<T: Default>(source: Arg<T>, slot: usize) -> SlotOrDefault<T> {
    SlotOrDefault {
        source,
        slot,
        default: T::default,
    }
}

impl<'c, T> Step<'c> for SlotOrDefault<T> {
    type Early = T;
    type Value = T;
    #[inline]
    fn early<const N: usize>(&self, input: &Input<'_, '_, N>) -> Result<T, Invalid> {
        self.source
            .early_with(input.tool, &input.fields, self.slot, self.default)
    }
    #[inline]
    fn late(&self, value: T, _: &Call<'c>) -> Result<T, Invalid> {
        Ok(value)
    }
}

/// The whole arguments object (`#[args]`).
pub struct Object<T>(Arg<T>);

/// The parameter decoded from the whole arguments object (`#[args]`).
pub const fn object<T>(source: Arg<T>) -> Object<T> {
    Object(source)
}

impl<'c, T> Step<'c> for Object<T> {
    type Early = T;
    type Value = T;
    #[inline]
    fn early<const N: usize>(&self, input: &Input<'_, '_, N>) -> Result<T, Invalid> {
        self.0.decode_object(input.tool, input.args)
    }
    #[inline]
    fn late(&self, value: T, _: &Call<'c>) -> Result<T, Invalid> {
        Ok(value)
    }
}

/// A parameter taken from the call only (`&T`, or beside `#[args]`).
pub struct Extract<'c, T>(Extractor<'c, T>);

/// The parameter extracted from the call, with no argument slot.
pub const fn extract<T>(source: Extractor<'_, T>) -> Extract<'_, T> {
    Extract(source)
}

impl<'c, T> Step<'c> for Extract<'c, T> {
    type Early = Deferred;
    type Value = T;
    #[inline]
    fn early<const N: usize>(&self, _: &Input<'_, '_, N>) -> Result<Deferred, Invalid> {
        Ok(Deferred)
    }
    #[inline]
    fn late(&self, _: Deferred, call: &Call<'c>) -> Result<T, Invalid> {
        super::reply::rejected(self.0.late(Deferred, call))
    }
}

/// A tuple of [`Step`]s: the parameters of a sync tool, in order.
pub trait Steps<'c> {
    /// The parameters' values, in order: the tool's arguments.
    type Values;
    /// Every parameter decoded, then every one taken.
    fn run<const N: usize>(
        &self,
        input: &Input<'_, '_, N>,
        call: &Call<'c>,
    ) -> Result<Self::Values, Invalid>;
}

/// Invokes `$m!` once per arity from 0 to 12 (the longest sync tool the
/// shims serve), with that many `(Type value index)` names from one list:
/// every tuple impl below is generated from it.
macro_rules! for_arities {
    ($m:ident) => {
        for_arities!(@ $m []
            (P0 v0 0) (P1 v1 1) (P2 v2 2) (P3 v3 3) (P4 v4 4) (P5 v5 5)
            (P6 v6 6) (P7 v7 7) (P8 v8 8) (P9 v9 9) (P10 v10 10) (P11 v11 11));
    };
    (@ $m:ident [$($done:tt)*] $next:tt $($rest:tt)*) => {
        $m!($($done)*);
        for_arities!(@ $m [$($done)* $next] $($rest)*);
    };
    (@ $m:ident [$($done:tt)*]) => {
        $m!($($done)*);
    };
}

macro_rules! steps {
    ($(($s:ident $e:ident $_i:tt))*) => {
        impl<'c, $($s: Step<'c>),*> Steps<'c> for ($($s,)*) {
            type Values = ($($s::Value,)*);
            #[allow(non_snake_case, unused_variables, clippy::unused_unit)]
            fn run<const N: usize>(
                &self,
                input: &Input<'_, '_, N>,
                call: &Call<'c>,
            ) -> Result<Self::Values, Invalid> {
                let ($($s,)*) = self;
                $(let $e = $s.early(input)?;)*
                $(let $e = $s.late($e, call)?;)*
                Ok(($($e,)*))
            }
        }
    };
}

for_arities!(steps);

/// The parameters of a sync tool: the arguments object split by the `N`
/// wire `names` of its slots (not at all when `N` is 0: a tool with no
/// plain argument takes any arguments), then `steps` run; the first
/// failure refuses the input.
pub fn sync_params<'c, S: Steps<'c>, const N: usize>(
    tool: &str,
    args: Option<Arguments<'_>>,
    names: [&'static str; N],
    steps: &S,
    call: &Call<'c>,
) -> Result<S::Values, Invalid> {
    let fields = if N == 0 {
        ArgsObject::empty(names)
    } else {
        ArgsObject::parse(tool, args, names)?
    };
    let input = Input { tool, args, fields };
    steps.run(&input, call)
}

/// A sync function of the parameters `V`, as a function pointer: called
/// with their values. Through a pointer, the shims of every item of the
/// same parameter and return types share one instantiation of
/// [`sync_resource`] and [`sync_prompt`].
pub trait Invoke<V> {
    /// What the function returns.
    type Output;
    /// Calls the function with the values, in order.
    fn invoke(self, values: V) -> Self::Output;
}

macro_rules! invoke {
    ($(($a:ident $v:ident $_i:tt))*) => {
        impl<$($a,)* R> Invoke<($($a,)*)> for fn($($a),*) -> R {
            type Output = R;
            #[allow(clippy::unused_unit)]
            fn invoke(self, ($($v,)*): ($($a,)*)) -> R {
                self($($v),*)
            }
        }
    };
}

for_arities!(invoke);

/// How a resource's value is written: `write_resource::<T>`, named (and
/// its bound checked) at the return type by the generated code.
pub type WriteResource<R> = fn(R, Option<&str>, Option<&str>, &mut ResultOut<'_>) -> Outcome;

/// How a prompt's value is written: `write_prompt::<T>`, as [`WriteResource`].
pub type WritePrompt<R> = fn(R, &mut ResultOut<'_>) -> Outcome;

/// The whole shim of a sync resource: its parameters as [`sync_params`]
/// takes them, the read URI taken, `func` called and its value written as
/// the read of that URI.
#[allow(clippy::too_many_arguments)]
pub fn sync_resource<'c, S: Steps<'c>, F: Invoke<S::Values>, const N: usize>(
    resource: &str,
    args: Option<Arguments<'_>>,
    names: [&'static str; N],
    steps: &S,
    call: &Call<'c>,
    out: &mut ResultOut<'_>,
    func: F,
    write: WriteResource<F::Output>,
    mime_type: Option<&str>,
) -> CallOutcome {
    match sync_params(resource, args, names, steps, call) {
        Ok(values) => {
            let uri = call.resource_uri();
            write(func.invoke(values), uri, mime_type, out).into()
        }
        Err(invalid) => invalid.into(),
    }
}

/// The whole shim of a sync prompt, as [`sync_resource`]: its messages written.
#[allow(clippy::too_many_arguments)]
pub fn sync_prompt<'c, S: Steps<'c>, F: Invoke<S::Values>, const N: usize>(
    prompt: &str,
    args: Option<Arguments<'_>>,
    names: [&'static str; N],
    steps: &S,
    call: &Call<'c>,
    out: &mut ResultOut<'_>,
    func: F,
    write: WritePrompt<F::Output>,
) -> CallOutcome {
    match sync_params(prompt, args, names, steps, call) {
        Ok(values) => write(func.invoke(values), out).into(),
        Err(invalid) => invalid.into(),
    }
}

/// One parameter's part of a tool's input schema and of the states it needs.
pub trait Describe {
    /// Adds the parameter to the input schema (an extractor adds nothing).
    fn schema_into(
        &self,
        schema: ObjectSchema,
        name: &str,
        description: Option<&str>,
        has_default: bool,
    ) -> ObjectSchema;
    /// Adds the states the parameter needs.
    fn states(&self, out: &mut Vec<StateReq>);
}

impl<T> Describe for Arg<T> {
    fn schema_into(
        &self,
        schema: ObjectSchema,
        name: &str,
        description: Option<&str>,
        has_default: bool,
    ) -> ObjectSchema {
        Arg::schema_into(*self, schema, name, description, has_default)
    }
    fn states(&self, out: &mut Vec<StateReq>) {
        Arg::states(*self, out);
    }
}

impl<T> Describe for Extractor<'_, T> {
    fn schema_into(
        &self,
        schema: ObjectSchema,
        name: &str,
        description: Option<&str>,
        has_default: bool,
    ) -> ObjectSchema {
        Extractor::schema_into(*self, schema, name, description, has_default)
    }
    fn states(&self, out: &mut Vec<StateReq>) {
        Extractor::states(*self, out);
    }
}

/// A tuple of [`Describe`]s: a tool's parameters (or its plain arguments), in order.
pub trait Describes {
    /// The input schema of the arguments: element `i` is named `names[i]`.
    fn object_schema(
        &self,
        names: &[&str],
        descriptions: &[Option<&str>],
        defaults: &[bool],
    ) -> Schema;
    /// The states of every parameter.
    fn states(&self, out: &mut Vec<StateReq>);
}

macro_rules! describes {
    ($(($s:ident $_v:ident $i:tt))*) => {
        impl<$($s: Describe),*> Describes for ($($s,)*) {
            #[allow(unused_variables)]
            fn object_schema(
                &self,
                names: &[&str],
                descriptions: &[Option<&str>],
                defaults: &[bool],
            ) -> Schema {
                let schema = ObjectSchema::new();
                $(let schema = self.$i.schema_into(schema, names[$i], descriptions[$i], defaults[$i]);)*
                schema.build()
            }
            #[allow(unused_variables)]
            fn states(&self, out: &mut Vec<StateReq>) {
                $(self.$i.states(out);)*
            }
        }
    };
}

for_arities!(describes);

/// The input schema of a tool's plain arguments, one property each, from
/// their sources (generic, so instantiated once per tuple of types).
pub fn object_schema<S: Describes>(
    sources: &S,
    names: &[&str],
    descriptions: &[Option<&str>],
    defaults: &[bool],
) -> Schema {
    sources.object_schema(names, descriptions, defaults)
}

/// The states a tool's parameters need, from their sources.
pub fn states<S: Describes>(sources: &S, out: &mut Vec<StateReq>) {
    sources.states(out);
}
