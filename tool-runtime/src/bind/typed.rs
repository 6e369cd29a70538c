//! The typed fast path: binding arguments that are already exactly right
//! straight into the parameters' Rust types, without building a JSON tree.
//!
//! It cannot accept anything the binder would change or refuse, by
//! construction: every value is parsed through [`Checked`], a deserializer
//! adapter that walks the parameter's [`Shape`] beside the data and lets a
//! value through only when it is of the shape's own JSON kind and passes the
//! same checks the binder makes ([`Shape::integer_fits`],
//! [`Shape::check_text`], ...). Anything else (a value that would be
//! coerced, a bound broken, a `null` where a default applies, a key that is
//! no field, a value nested too deep) makes the parse give up, and the call
//! goes through the full binder, which decides, warns and explains. Giving
//! up is always safe; it only costs time.
//!
//! In lenient mode, when the registry hands it a [`Coerced`] record, the
//! parse also takes the commonest coercions of a parameter's own value
//! (not of values nested in it) exactly as the binder would, with the same
//! warning: a string holding a boolean or an integer, and a single string
//! for a list. Any other coercion still gives up.

use std::fmt;
use std::marker::PhantomData;
use std::sync::{Mutex, PoisonError};

use serde::de::{
    self, DeserializeOwned, DeserializeSeed, Deserializer, IntoDeserializer, MapAccess, SeqAccess, Visitor,
};

use super::describe::Sentence;
use super::{IntegerLiteral, converted_to_integer, parse_integer_literal, read_as, text_boolean, wrapped_in_list};
use crate::call::{Arguments, Repr};
use crate::codes::{Warning, WarningCode};
use crate::schema::{Field, Kind, MAX_DEPTH, ObjectShape, Presence, Shape};

/// The warnings of the coercions the typed parse made, for the registry to
/// put on the result; read only when the parse succeeded.
#[derive(Debug, Default)]
pub struct Coerced(Mutex<Vec<Warning>>);

impl Coerced {
    fn record(&self, warning: Warning) {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).push(warning);
    }

    /// The warnings recorded, in the order met.
    pub(crate) fn into_warnings(self) -> Vec<Warning> {
        self.0.into_inner().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Where a parameter's own value may record a coercion.
#[derive(Clone, Copy)]
struct Coercer<'s> {
    record: &'s Coerced,
    field: &'s Field,
}

impl Coercer<'_> {
    /// A warning at the parameter, as the binder words it.
    fn warn(&self, code: WarningCode, detail: Sentence) {
        self.record
            .record(Warning::new(code, self.field.name.clone(), detail.done()));
    }
}

/// Parses the arguments as sent with `visitor`: raw text must be one JSON
/// object with nothing after it; a value must be an object. `None` sends the
/// call to the full binder.
pub(super) fn parse_arguments<V, T>(arguments: &Arguments<'_>, visitor: V) -> Option<T>
where
    V: for<'de> Visitor<'de, Value = T>,
{
    match arguments.repr() {
        // No keys at all, as models send for a tool of no parameters: the
        // visitor sees the same empty map a parse would give it.
        Repr::Text(text) if is_empty_object(text) => {
            let empty = de::value::MapDeserializer::<_, serde_json::Error>::new(std::iter::empty::<(&str, &str)>());
            visitor.visit_map(empty).ok()
        }
        Repr::Text(text) => {
            let mut deserializer = serde_json::Deserializer::from_str(text);
            let value = deserializer.deserialize_map(visitor).ok()?;
            deserializer.end().ok()?;
            Some(value)
        }
        Repr::Json(value) => (&**value).deserialize_map(visitor).ok(),
    }
}

/// Whether `text` is the JSON object `{}`, with JSON whitespace around or
/// inside it.
fn is_empty_object(text: &str) -> bool {
    let is_space = |b: &u8| matches!(b, b' ' | b'\t' | b'\n' | b'\r');
    let bytes = text.as_bytes();
    let Some(open) = bytes.iter().position(|b| !is_space(b)) else {
        return false;
    };
    let Some(close) = bytes.iter().rposition(|b| !is_space(b)) else {
        return false;
    };
    open < close && bytes[open] == b'{' && bytes[close] == b'}' && bytes[open + 1..close].iter().all(is_space)
}

/// What the fast path found for one parameter.
#[derive(Debug)]
pub enum Slot<T> {
    /// The key was not sent.
    Absent,
    /// The key was sent with `null`.
    Null,
    /// A value that fits the parameter exactly.
    Given(T),
}

impl<T: DeserializeOwned> Slot<T> {
    /// Records the value read for a key; a key sent twice gives up (the
    /// binder keeps the last one, and says nothing, so let it decide).
    pub fn fill<E: de::Error>(&mut self, slot: Slot<T>) -> Result<(), E> {
        match self {
            Slot::Absent => {
                *self = slot;
                Ok(())
            }
            _ => Err(give_up()),
        }
    }

    /// The value of a parameter without a default as the binder would bind
    /// it, or `None` where the binder would have something to say (a
    /// missing or `null` required value).
    pub fn resolve(self, field: &Field) -> Option<T> {
        match (self, field.presence) {
            (Slot::Given(value), _) => Some(value),
            (Slot::Absent | Slot::Null, Presence::Optional) => {
                T::deserialize(de::value::UnitDeserializer::<de::value::Error>::new()).ok()
            }
            // A defaulted field's default is `resolve_or`'s to give.
            (Slot::Absent | Slot::Null, Presence::Required | Presence::Defaulted) => None,
        }
    }

    /// The value of a parameter with a default, as [`resolve`](Self::resolve)
    /// gives it: `default` when the key was not sent, and for a `null` when
    /// `null_is_absent` (a `null` stands for "not given" by design: the
    /// model was sent strict definitions); otherwise a `null` is the
    /// binder's to replace, with a warning.
    pub fn resolve_or(self, field: &Field, null_is_absent: bool, default: fn() -> T) -> Option<T> {
        match (self, field.presence) {
            (Slot::Given(value), _) => Some(value),
            (Slot::Absent, Presence::Defaulted) => Some(default()),
            (Slot::Null, Presence::Defaulted) => null_is_absent.then(default),
            (slot, _) => slot.resolve(field),
        }
    }
}

pub(super) fn give_up<E: de::Error>() -> E {
    // The message is never read: the call goes to the full binder.
    E::custom("")
}

/// Reads one top-level parameter's value: `null` as [`Slot::Null`], any
/// other value through [`Checked`].
pub(super) struct ParamSeed<'f, T> {
    field: &'f Field,
    coerced: Option<&'f Coerced>,
    marker: PhantomData<fn() -> T>,
}

impl<'f, T> ParamSeed<'f, T> {
    /// The seed for `field`; with `coerced`, the value may be coerced
    /// (lenient mode), its warning recorded there.
    pub fn new(field: &'f Field, coerced: Option<&'f Coerced>) -> Self {
        ParamSeed {
            field,
            coerced,
            marker: PhantomData,
        }
    }
}

impl<'de, T: DeserializeOwned> DeserializeSeed<'de> for ParamSeed<'_, T> {
    type Value = Slot<T>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Slot<T>, D::Error> {
        if self.field.presence == Presence::Required && !self.field.shape.nullable {
            // No `null` can fit: it gives up inside, as `Slot::Null` would
            // when resolved, without asking first.
            return self.visit_some(deserializer);
        }
        deserializer.deserialize_option(self)
    }
}

impl<'de, T: DeserializeOwned> Visitor<'de> for ParamSeed<'_, T> {
    type Value = Slot<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a parameter value")
    }

    fn visit_none<E: de::Error>(self) -> Result<Slot<T>, E> {
        Ok(Slot::Null)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Slot<T>, E> {
        Ok(Slot::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Slot<T>, D::Error> {
        let mut checked = Checked::new(deserializer, &self.field.shape);
        checked.coerce = self.coerced.map(|record| Coercer {
            record,
            field: self.field,
        });
        T::deserialize(checked).map(Slot::Given)
    }
}

/// A deserializer that lets a value through only when it fits `shape`
/// exactly, as the binder would accept it unchanged and without a word.
struct Checked<'s, D> {
    inner: D,
    shape: &'s Shape,
    /// `null` is refused even for a nullable shape (a defaulted struct
    /// field, whose `null` the binder replaces by the default).
    null_refused: bool,
    /// Containers entered inside a `serde_json::Value` so far.
    depth: usize,
    /// Set for a parameter's own value in lenient mode: it may be coerced.
    coerce: Option<Coercer<'s>>,
}

impl<'s, D> Checked<'s, D> {
    fn new(inner: D, shape: &'s Shape) -> Self {
        Checked {
            inner,
            shape,
            null_refused: false,
            depth: 0,
            coerce: None,
        }
    }

    fn visitor<V>(&self, visitor: V) -> CheckedVisitor<'s, V> {
        CheckedVisitor {
            inner: visitor,
            shape: self.shape,
            null_refused: self.null_refused,
            depth: self.depth,
            coerce: self.coerce,
        }
    }
}

macro_rules! through_any {
    ($($method:ident)*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
            let visitor = self.visitor(visitor);
            self.inner.deserialize_any(visitor)
        }
    )*};
}

impl<'de, 's, D: Deserializer<'de>> Deserializer<'de> for Checked<'s, D> {
    type Error = D::Error;

    // Every value is read by what it is on the wire and checked against the
    // shape before the type's own visitor sees it: a mismatch gives up
    // cheaply, without the type formatting an "invalid type" message.
    through_any! {
        deserialize_any deserialize_bool deserialize_i8 deserialize_i16 deserialize_i32 deserialize_i64
        deserialize_i128 deserialize_u8 deserialize_u16 deserialize_u32 deserialize_u64 deserialize_u128
        deserialize_f32 deserialize_f64 deserialize_char deserialize_str deserialize_string deserialize_bytes
        deserialize_byte_buf deserialize_unit deserialize_seq deserialize_map deserialize_identifier
        deserialize_ignored_any
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        let visitor = self.visitor(visitor);
        self.inner.deserialize_option(visitor)
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(self, _: &'static str, visitor: V) -> Result<V::Value, D::Error> {
        self.deserialize_any(visitor)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(self, _: &'static str, visitor: V) -> Result<V::Value, D::Error> {
        // A newtype has its inner value's shape.
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_tuple<V: Visitor<'de>>(self, _: usize, visitor: V) -> Result<V::Value, D::Error> {
        self.deserialize_any(visitor)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: usize,
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.deserialize_any(visitor)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.deserialize_any(visitor)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        // Only unit variants are parameters: the wire value is a string,
        // which must be one of the shape's values as written.
        let shape = self.shape;
        self.inner.deserialize_any(EnumVisitor { inner: visitor, shape })
    }

    fn is_human_readable(&self) -> bool {
        self.inner.is_human_readable()
    }
}

/// The shape of what a `serde_json::Value` holds.
static ANY_VALUE: Shape = Shape::ANY_NULLABLE;

/// Checks what the wire holds against the shape, then hands it on.
struct CheckedVisitor<'s, V> {
    inner: V,
    shape: &'s Shape,
    null_refused: bool,
    depth: usize,
    coerce: Option<Coercer<'s>>,
}

impl<'s, V> CheckedVisitor<'s, V> {
    /// What a container's item count is checked against once it is read.
    #[inline(always)]
    fn counted(&self) -> Counted<'s> {
        Counted {
            shape: (!matches!(self.shape.kind, Kind::Any)).then_some(self.shape),
        }
    }

    fn integer_fits(&self, n: i128) -> bool {
        match self.shape.kind {
            Kind::Integer { .. } => self.shape.integer_fits(n),
            Kind::Number { .. } => self.shape.number_fits(n as f64),
            Kind::Any => true,
            _ => false,
        }
    }

    fn text_fits(&self, s: &str) -> bool {
        match self.shape.kind {
            Kind::String => self.shape.check_text(s).is_ok(),
            Kind::Enum(_) => self.shape.enum_has(s),
            Kind::Any => true,
            _ => false,
        }
    }

    /// A string that does not fit: in lenient mode, for a parameter's own
    /// value, read as the binder would coerce it, with its warning (a
    /// boolean, an integer within its bounds, a single string for a list);
    /// anything else gives up.
    fn coerced_str<'de, E: de::Error>(self, s: &str) -> Result<V::Value, E>
    where
        V: Visitor<'de>,
    {
        let Some(coerce) = self.coerce else {
            return Err(give_up());
        };
        match &self.shape.kind {
            Kind::Boolean => {
                let b = text_boolean(s).ok_or_else(give_up)?;
                let value = self.inner.visit_bool(b)?;
                coerce.warn(
                    WarningCode::StringConvertedToBoolean,
                    Sentence::new("").string(s).text(read_as(b)),
                );
                Ok(value)
            }
            Kind::Integer { .. } => {
                let IntegerLiteral::Integer(n) = parse_integer_literal(s) else {
                    return Err(give_up());
                };
                if !self.shape.integer_fits(n) {
                    return Err(give_up());
                }
                // As the binder's JSON number would be read: unsigned when
                // it is not negative.
                let value = match (u64::try_from(n), i64::try_from(n)) {
                    (Ok(u), _) => self.inner.visit_u64(u)?,
                    (_, Ok(i)) => self.inner.visit_i64(i)?,
                    _ => return Err(give_up()),
                };
                coerce.warn(WarningCode::StringConvertedToInteger, converted_to_integer(s, n));
                Ok(value)
            }
            Kind::Array { items, unique } => {
                // A string that may hold a JSON array is the binder's to
                // read; a set's lower bound counts distinct items.
                let bounded_set = *unique && self.shape.constraints.min_items.is_some();
                if s.trim_start().starts_with('[') || bounded_set || !self.shape.items_fit(1) {
                    return Err(give_up());
                }
                let value = self.inner.visit_seq(OneString {
                    text: Some(s),
                    items,
                    marker: PhantomData,
                })?;
                coerce.warn(
                    WarningCode::ScalarCoercedToList,
                    wrapped_in_list(Sentence::new("").string(s)),
                );
                Ok(value)
            }
            _ => Err(give_up()),
        }
    }

    /// The shape and depth of a container's elements, when this shape is
    /// a container of that kind and the nesting limit allows one more.
    fn element(&self, kind_is_list: bool) -> Option<(&'s Shape, usize)> {
        match &self.shape.kind {
            Kind::Array { items, .. } if kind_is_list => Some((items, 0)),
            Kind::Map { values } if !kind_is_list => Some((values, 0)),
            // Inside a `Value`, anything goes, `null` included.
            Kind::Any if self.depth < MAX_DEPTH => Some((&ANY_VALUE, self.depth + 1)),
            _ => None,
        }
    }
}

macro_rules! scalar_visits {
    ($($method:ident($ty:ty) => |$this:ident, $v:ident| $fits:expr;)*) => {$(
        fn $method<E: de::Error>(self, $v: $ty) -> Result<V::Value, E> {
            let $this = &self;
            if $fits { self.inner.$method($v) } else { Err(give_up()) }
        }
    )*};
}

impl<'de, 's, V: Visitor<'de>> Visitor<'de> for CheckedVisitor<'s, V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.inner.expecting(f)
    }

    scalar_visits! {
        visit_bool(bool) => |this, _v| matches!(this.shape.kind, Kind::Boolean | Kind::Any);
        visit_i64(i64) => |this, v| this.integer_fits(i128::from(v));
        visit_u64(u64) => |this, v| this.integer_fits(i128::from(v));
        visit_f64(f64) => |this, v| match this.shape.kind {
            Kind::Number { .. } => this.shape.number_fits(v),
            Kind::Any => true,
            _ => false,
        };
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<V::Value, E> {
        if self.text_fits(v) {
            self.inner.visit_str(v)
        } else {
            self.coerced_str(v)
        }
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<V::Value, E> {
        if self.text_fits(v) {
            self.inner.visit_borrowed_str(v)
        } else {
            self.coerced_str(v)
        }
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<V::Value, E> {
        if self.text_fits(&v) {
            self.inner.visit_string(v)
        } else {
            self.coerced_str(&v)
        }
    }

    fn visit_none<E: de::Error>(self) -> Result<V::Value, E> {
        if self.shape.nullable && !self.null_refused {
            self.inner.visit_none()
        } else {
            Err(give_up())
        }
    }

    fn visit_unit<E: de::Error>(self) -> Result<V::Value, E> {
        if self.shape.nullable && !self.null_refused {
            self.inner.visit_unit()
        } else {
            Err(give_up())
        }
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<V::Value, D::Error> {
        let checked = Checked {
            inner: deserializer,
            shape: self.shape,
            null_refused: self.null_refused,
            depth: self.depth,
            coerce: self.coerce,
        };
        self.inner.visit_some(checked)
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, deserializer: D) -> Result<V::Value, D::Error> {
        let checked = Checked {
            inner: deserializer,
            shape: self.shape,
            null_refused: self.null_refused,
            depth: self.depth,
            coerce: self.coerce,
        };
        self.inner.visit_newtype_struct(checked)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<V::Value, A::Error> {
        let Some((items, depth)) = self.element(true) else {
            return Err(give_up());
        };
        // A set with a lower item bound counts distinct items, which only
        // the binder can see.
        let unique_with_minimum =
            matches!(self.shape.kind, Kind::Array { unique: true, .. }) && self.shape.constraints.min_items.is_some();
        if unique_with_minimum {
            return Err(give_up());
        }
        let mut seq = CheckedSeq {
            inner: seq,
            items,
            depth,
            count: 0,
        };
        let counted = self.counted();
        let value = self.inner.visit_seq(&mut seq)?;
        counted.check(value, seq.count)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<V::Value, A::Error> {
        if let Kind::Object(object) = &self.shape.kind {
            return self.inner.visit_map(CheckedObject {
                inner: map,
                object,
                field: None,
            });
        }
        let Some((values, depth)) = self.element(false) else {
            return Err(give_up());
        };
        // As for a set: a key sent twice counts once in the map the binder
        // sees, so a lower bound is the binder's to check.
        if self.shape.constraints.min_items.is_some() {
            return Err(give_up());
        }
        let mut map = CheckedMap {
            inner: map,
            values,
            depth,
            count: 0,
        };
        let counted = self.counted();
        let value = self.inner.visit_map(&mut map)?;
        counted.check(value, map.count)
    }
}

/// A container's item bounds, checked once its items are counted; none
/// inside a `serde_json::Value`.
struct Counted<'s> {
    shape: Option<&'s Shape>,
}

impl Counted<'_> {
    #[inline(always)]
    fn check<T, E: de::Error>(self, value: T, count: usize) -> Result<T, E> {
        if self.shape.is_none_or(|shape| shape.items_fit(count)) {
            Ok(value)
        } else {
            Err(give_up())
        }
    }
}

/// The elements of a list (or of a JSON array inside a `Value`).
struct CheckedSeq<'s, A> {
    inner: A,
    items: &'s Shape,
    depth: usize,
    count: usize,
}

impl<'de, A: SeqAccess<'de>> SeqAccess<'de> for CheckedSeq<'_, A> {
    type Error = A::Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>, A::Error> {
        let seed = CheckedSeed {
            inner: seed,
            shape: self.items,
            null_refused: false,
            depth: self.depth,
        };
        let element = self.inner.next_element_seed(seed)?;
        self.count += usize::from(element.is_some());
        Ok(element)
    }

    fn size_hint(&self) -> Option<usize> {
        self.inner.size_hint()
    }
}

/// The entries of a map with free keys (or of a JSON object inside a `Value`).
struct CheckedMap<'s, A> {
    inner: A,
    values: &'s Shape,
    depth: usize,
    count: usize,
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for CheckedMap<'_, A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, A::Error> {
        let key = self.inner.next_key_seed(seed)?;
        self.count += usize::from(key.is_some());
        Ok(key)
    }

    fn next_value_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<T::Value, A::Error> {
        self.inner.next_value_seed(CheckedSeed {
            inner: seed,
            shape: self.values,
            null_refused: false,
            depth: self.depth,
        })
    }

    fn size_hint(&self) -> Option<usize> {
        self.inner.size_hint()
    }
}

/// The fields of a struct: every key must be one of them.
struct CheckedObject<'s, A> {
    inner: A,
    object: &'s ObjectShape,
    /// The field whose value comes next.
    field: Option<&'s Field>,
}

impl<'de, 's, A: MapAccess<'de>> MapAccess<'de> for CheckedObject<'s, A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, A::Error> {
        let mut field = None;
        let key = self.inner.next_key_seed(KeySeed {
            inner: seed,
            object: self.object,
            field: &mut field,
        })?;
        self.field = field;
        Ok(key)
    }

    fn next_value_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<T::Value, A::Error> {
        let Some(field) = self.field.take() else {
            return Err(give_up());
        };
        self.inner.next_value_seed(CheckedSeed {
            inner: seed,
            shape: &field.shape,
            null_refused: field.presence == Presence::Defaulted,
            depth: 0,
        })
    }

    fn size_hint(&self) -> Option<usize> {
        self.inner.size_hint()
    }
}

/// A struct's key: found among the fields, or the parse gives up (the
/// binder reports or drops keys that are no field).
struct KeySeed<'a, 's, K> {
    inner: K,
    object: &'s ObjectShape,
    field: &'a mut Option<&'s Field>,
}

impl<'de, K: DeserializeSeed<'de>> DeserializeSeed<'de> for KeySeed<'_, '_, K> {
    type Value = K::Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<K::Value, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de, K: DeserializeSeed<'de>> Visitor<'de> for KeySeed<'_, '_, K> {
    type Value = K::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a field name")
    }

    fn visit_str<E: de::Error>(self, key: &str) -> Result<K::Value, E> {
        let Some(field) = self.object.field(key) else {
            return Err(give_up());
        };
        *self.field = Some(field);
        self.inner.deserialize(de::value::StrDeserializer::new(key))
    }

    fn visit_borrowed_str<E: de::Error>(self, key: &'de str) -> Result<K::Value, E> {
        let Some(field) = self.object.field(key) else {
            return Err(give_up());
        };
        *self.field = Some(field);
        self.inner.deserialize(de::value::BorrowedStrDeserializer::new(key))
    }
}

/// A seed whose value is read through [`Checked`].
struct CheckedSeed<'s, T> {
    inner: T,
    shape: &'s Shape,
    null_refused: bool,
    depth: usize,
}

impl<'de, T: DeserializeSeed<'de>> DeserializeSeed<'de> for CheckedSeed<'_, T> {
    type Value = T::Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<T::Value, D::Error> {
        self.inner.deserialize(Checked {
            inner: deserializer,
            shape: self.shape,
            null_refused: self.null_refused,
            depth: self.depth,
            coerce: None,
        })
    }
}

/// A single string read as a list of it (`scalar_coerced_to_list`): its one
/// element must fit the items exactly.
struct OneString<'a, 's, E> {
    text: Option<&'a str>,
    items: &'s Shape,
    marker: PhantomData<fn() -> E>,
}

impl<'de, E: de::Error> SeqAccess<'de> for OneString<'_, '_, E> {
    type Error = E;

    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>, E> {
        let Some(text) = self.text.take() else {
            return Ok(None);
        };
        let element = de::value::StrDeserializer::<E>::new(text);
        seed.deserialize(Checked::new(element, self.items)).map(Some)
    }

    fn size_hint(&self) -> Option<usize> {
        Some(usize::from(self.text.is_some()))
    }
}

/// A unit variant: a string that is one of the enum's values as written.
struct EnumVisitor<'s, V> {
    inner: V,
    shape: &'s Shape,
}

impl<'de, V: Visitor<'de>> Visitor<'de> for EnumVisitor<'_, V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.inner.expecting(f)
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<V::Value, E> {
        if self.shape.enum_has(s) {
            self.inner.visit_enum(s.into_deserializer())
        } else {
            Err(give_up())
        }
    }

    fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<V::Value, E> {
        self.visit_str(s)
    }

    fn visit_string<E: de::Error>(self, s: String) -> Result<V::Value, E> {
        self.visit_str(&s)
    }

    fn visit_none<E: de::Error>(self) -> Result<V::Value, E> {
        Err(give_up())
    }
}
