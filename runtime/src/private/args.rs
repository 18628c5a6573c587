//! Decoding a tool's JSON arguments and describing them in its input schema.

use crate::context::StateReq;
use crate::extract::{Call, Rejection};
use crate::result::Invalid;
use crate::schema::{Schema, input_schema};
use crate::tool::Arguments;

/// A type a tool can take as a JSON argument (or as its `#[args]` object).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a `#[mcp_tool]` argument",
    label = "not `Deserialize` + `JsonSchema`",
    note = "an argument's type must implement `serde::Deserialize` and `schemars::JsonSchema`; for your own types, add `#[derive(serde::Deserialize, schemars::JsonSchema)]`",
    note = "to take a state of the server instead, take it by reference: `&{Self}`; to take it from the call, implement `ide_mcp_runtime::FromCall` for it"
)]
pub trait Argument: serde::de::DeserializeOwned + schemars::JsonSchema {}

#[diagnostic::do_not_recommend]
impl<T: serde::de::DeserializeOwned + schemars::JsonSchema> Argument for T {}

/// How to decode and describe one argument type `T`.
///
/// The generated code names `argument::<T>()` (or the probe of
/// [`Param`](super::Param), which comes here for a type that is no
/// extractor) at every use of an argument type, spanned on the parameter:
/// a type that is not an [`Argument`] fails there, with the message above
/// (identical diagnostics at one span are reported once). No
/// arguments struct is derived in the user's crate for the same reason: its
/// derives would report every missing bound again.
pub struct Arg<T> {
    decode: fn(&str) -> Result<T, (String, String)>,
    missing: fn() -> Option<T>,
    schema: fn() -> Schema,
}

/// The [`Arg`] of type `T`.
pub const fn argument<T: Argument>() -> Arg<T> {
    Arg {
        decode: decode_value::<T>,
        missing: missing_value::<T>,
        schema: input_schema::<T>,
    }
}

/// Decodes `json`; on failure, the path inside the value (`""` at its root,
/// `.start` or `[0]` below) and serde's message without its position.
fn decode_value<T: serde::de::DeserializeOwned>(json: &str) -> Result<T, (String, String)> {
    crate::decode::decode(json).map_err(|err| {
        let path = match err.path() {
            index if index.is_empty() || index.starts_with('[') => index.to_owned(),
            field => format!(".{field}"),
        };
        (path, err.message().to_owned())
    })
}

/// The value of an absent argument, as serde gives a missing struct field:
/// `None` for an `Option`, nothing (the argument is required) otherwise.
fn missing_value<T: serde::de::DeserializeOwned>() -> Option<T> {
    T::deserialize(Missing).ok()
}

/// The deserializer of an absent field: only `Option`s accept it.
struct Missing;

impl<'de> serde::Deserializer<'de> for Missing {
    type Error = serde::de::value::Error;

    fn deserialize_any<V: serde::de::Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
        Err(serde::de::Error::custom("missing"))
    }

    fn deserialize_option<V: serde::de::Visitor<'de>>(
        self,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        visitor.visit_none()
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        unit unit_struct newtype_struct seq tuple tuple_struct map struct enum identifier ignored_any
    }
}

/// `tool` is a tool's name, or what else the shim decodes for, quoted
/// (`` prompt `fix` ``): tool names never hold a backquote.
fn invalid(tool: &str, message: &dyn core::fmt::Display) -> Invalid {
    Invalid(if tool.contains('`') {
        format!("invalid arguments for {tool}: {message}")
    } else {
        format!("invalid arguments for tool `{tool}`: {message}")
    })
}

impl<T> Arg<T> {
    /// Takes the argument `name` from `fields`, before the call (a spawned
    /// tool decodes its arguments first).
    pub fn early<const N: usize>(
        self,
        tool: &str,
        fields: &ArgsObject<'_, N>,
        slot: usize,
    ) -> Result<T, Invalid> {
        self.take_with(tool, fields.names[slot], fields.values[slot], None)
    }

    /// Like [`early`](Self::early), with `T::default()` when absent (`#[arg(default)]`).
    pub fn early_or_default<const N: usize>(
        self,
        tool: &str,
        fields: &ArgsObject<'_, N>,
        slot: usize,
    ) -> Result<T, Invalid>
    where
        T: Default,
    {
        self.take_with(
            tool,
            fields.names[slot],
            fields.values[slot],
            Some(T::default),
        )
    }

    /// Like [`early`](Self::early), with `default()` when absent.
    pub(super) fn early_with<const N: usize>(
        self,
        tool: &str,
        fields: &ArgsObject<'_, N>,
        slot: usize,
        default: fn() -> T,
    ) -> Result<T, Invalid> {
        self.take_with(tool, fields.names[slot], fields.values[slot], Some(default))
    }

    /// The value [`early`](Self::early) decoded: an argument needs nothing of the call.
    #[allow(clippy::unnecessary_wraps)] // the same shape as `Extractor::late`
    pub fn late(self, value: T, _: &Call<'_>) -> Result<T, Rejection> {
        Ok(value)
    }

    /// Adds the argument to a tool's input schema.
    pub fn schema_into(
        self,
        schema: ObjectSchema,
        name: &str,
        description: Option<&str>,
        has_default: bool,
    ) -> ObjectSchema {
        schema.arg(name, self, description, has_default)
    }

    /// An argument needs no state.
    pub fn states(self, _: &mut Vec<StateReq>) {}

    fn take_with(
        self,
        tool: &str,
        name: &str,
        raw: Option<&str>,
        default: Option<fn() -> T>,
    ) -> Result<T, Invalid> {
        let value = match raw {
            Some(raw) => {
                (self.decode)(raw).map_err(|(path, message)| format!("`{name}{path}`: {message}"))
            }
            None => default
                .map(|f| f())
                .or_else(self.missing)
                .ok_or_else(|| format!("missing field `{name}`")),
        };
        value.map_err(|message| invalid(tool, &message))
    }

    /// Decodes the whole arguments object as `T` (`#[args]`); `None` decodes from `{}`.
    pub fn decode_object(self, tool: &str, args: Option<Arguments<'_>>) -> Result<T, Invalid> {
        let json = args.map_or("{}", Arguments::json);
        let json = if json.trim() == "null" { "{}" } else { json };
        (self.decode)(json).map_err(|(path, message)| {
            if path.is_empty() {
                invalid(tool, &message)
            } else {
                let path = path.trim_start_matches('.');
                invalid(tool, &format_args!("`{path}`: {message}"))
            }
        })
    }

    /// The argument's schema (a whole input schema for `#[args]`).
    pub fn schema(self) -> Schema {
        (self.schema)()
    }

    /// Whether the argument may be absent.
    fn is_optional(self) -> bool {
        (self.missing)().is_some()
    }
}

impl<T> Clone for Arg<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Arg<T> {}

/// A tool's arguments object, split into the JSON text of its `N` known
/// arguments in one pass, with no allocation: unknown fields are skipped,
/// a repeated field keeps its last value.
pub struct ArgsObject<'a, const N: usize> {
    names: [&'static str; N],
    values: [Option<&'a str>; N],
}

impl<'a, const N: usize> ArgsObject<'a, N> {
    /// No arguments object split: every argument absent.
    pub(super) fn empty(names: [&'static str; N]) -> Self {
        Self {
            names,
            values: [None; N],
        }
    }

    /// Splits the `arguments` of `tools/call` (absent or `null`: no
    /// arguments).
    pub fn parse(
        tool: &str,
        args: Option<Arguments<'a>>,
        names: [&'static str; N],
    ) -> Result<Self, Invalid> {
        let mut fields = Self {
            names,
            values: [None; N],
        };
        let Some(json) = args.map(Arguments::json) else {
            return Ok(fields);
        };
        // An object of plain member names, read by hand; anything else
        // (`null`, escapes in a name, not JSON) by serde, which also says
        // what is wrong.
        let split = crate::json_cursor::object_members(json, |name, value| {
            if let Some(slot) = fields.names.iter().position(|known| *known == name) {
                fields.values[slot] = Some(value);
            }
        });
        if split.is_some() {
            return Ok(fields);
        }
        fields.values = [None; N];
        let mut de = serde_json::Deserializer::from_str(json);
        let parsed = serde::Deserializer::deserialize_any(&mut de, FieldsVisitor(&mut fields))
            .and_then(|()| de.end());
        if parsed.is_err() {
            return Err(invalid(tool, &"the arguments must be a JSON object"));
        }
        Ok(fields)
    }
}

/// A field name, borrowed from the input unless it has escapes.
/// (`Cow<str>`'s own `Deserialize` always allocates.)
struct Key<'de>(std::borrow::Cow<'de, str>);

impl<'de> serde::Deserialize<'de> for Key<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> serde::de::Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.write_str("a field name")
            }
            fn visit_borrowed_str<E: serde::de::Error>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(std::borrow::Cow::Borrowed(v)))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(Key(std::borrow::Cow::Owned(v.to_owned())))
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
}

struct FieldsVisitor<'f, 'a, const N: usize>(&'f mut ArgsObject<'a, N>);

impl<'de: 'a, 'a, const N: usize> serde::de::Visitor<'de> for FieldsVisitor<'_, 'a, N> {
    type Value = ();

    fn expecting(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<(), E> {
        Ok(()) // `null`: no arguments
    }

    fn visit_map<M: serde::de::MapAccess<'de>>(self, mut map: M) -> Result<(), M::Error> {
        while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
            match self.0.names.iter().position(|name| *name == key) {
                Some(slot) => {
                    let value = map.next_value::<&'de serde_json::value::RawValue>()?;
                    self.0.values[slot] = Some(value.get());
                }
                None => {
                    map.next_value::<serde::de::IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
}

/// Builds the input schema of a tool with plain arguments, one property each.
#[derive(Default)]
pub struct ObjectSchema {
    properties: serde_json::Map<String, serde_json::Value>,
    required: Vec<serde_json::Value>,
}

impl ObjectSchema {
    /// A schema with no properties.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds the argument `name`, required unless it may be absent or has a default.
    pub fn arg<T>(
        mut self,
        name: &str,
        arg: Arg<T>,
        description: Option<&str>,
        has_default: bool,
    ) -> Self {
        let mut schema = arg.schema().to_value();
        if let serde_json::Value::Object(map) = &mut schema {
            // A root schema's `title` is its type's name, noise for an argument.
            map.remove("title");
            if let Some(description) = description {
                map.insert("description".into(), description.into());
            }
        }
        if !has_default && !arg.is_optional() {
            self.required.push(name.into());
        }
        self.properties.insert(name.into(), schema);
        self
    }

    /// The finished schema.
    pub fn build(self) -> Schema {
        let mut map = serde_json::Map::new();
        map.insert("type".into(), "object".into());
        map.insert(
            "properties".into(),
            serde_json::Value::Object(self.properties),
        );
        if !self.required.is_empty() {
            map.insert("required".into(), serde_json::Value::Array(self.required));
        }
        Schema::from(map)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The values `parse` finds for `names`, or the error it writes.
    fn split(json: Option<&str>, names: [&'static str; 2]) -> Result<[Option<String>; 2], String> {
        match ArgsObject::parse("t", json.map(Arguments::checked), names) {
            Ok(fields) => Ok(fields.values.map(|v| v.map(str::to_owned))),
            Err(Invalid(message)) => Err(message),
        }
    }

    fn both(a: &str, b: &str) -> [Option<String>; 2] {
        [Some(a.to_owned()), Some(b.to_owned())]
    }

    #[test]
    fn arguments_are_split_by_name() {
        let names = ["path", "line"];
        assert_eq!(
            split(
                Some(r#"{"line": 3, "x": {"path": 1}, "path": "a\"}"}"#),
                names
            ),
            Ok(both(r#""a\"}""#, "3"))
        );
        // The last of a repeated member; nothing for an absent one.
        assert_eq!(
            split(Some(r#"{"path":"a","path":[1,{"b":[]}]}"#), names),
            Ok([Some(r#"[1,{"b":[]}]"#.to_owned()), None])
        );
        assert_eq!(split(None, names), Ok([None, None]));
        assert_eq!(split(Some("{}"), names), Ok([None, None]));
    }

    /// What the hand reading gives up on, serde reads: the same values.
    #[test]
    fn the_other_shapes_are_read_by_serde() {
        let names = ["path", "line"];
        // An escape in a member name.
        assert_eq!(
            split(Some(r#"{"p\u0061th": "a", "line": 3}"#), names),
            Ok(both(r#""a""#, "3"))
        );
        assert_eq!(split(Some("null"), names), Ok([None, None]));
        for not_an_object in ["[1]", "3", r#""a""#] {
            let error = split(Some(not_an_object), names).unwrap_err();
            assert!(error.contains("must be a JSON object"), "{error}");
        }
    }
}
