//! A tool's parameters as one list type, read by both of the binder's
//! paths: the typed fast path's reading of the whole argument object, and
//! the full binder's taking of each parameter from the normalized object.
//! Written once here for every tool: a tool's parameter types come as a
//! list type (`(A, (B, (C, ())))`, in the order of its fields), and what
//! `#[tool]` generates is one call per path and a `match` from key to
//! parameter, not a visitor or a chain of takes of its own per tool, which
//! kept every crate of tools compiling the same logic again. Both paths
//! resolve an absent parameter with the same default function.

use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, DeserializeOwned, DeserializeSeed, MapAccess, Visitor};

use super::bound::BoundArguments;
use super::typed::{Coerced, ParamSeed, Slot, give_up, parse_arguments};
use crate::call::Arguments;
use crate::schema::Field;

/// A tool's parameter types as a list type, `(A, (B, ()))`; their slots are
/// `(Slot<A>, (Slot<B>, ()))`, their values `(A, (B, ()))` and their
/// defaults `(Option<fn() -> A>, (Option<fn() -> B>, ()))`.
pub trait Params {
    /// One [`Slot`] per parameter, in the same nesting.
    type Slots;

    /// The parameters' values, in the same nesting.
    type Values;

    /// Each parameter's default function, `None` for one without a
    /// default, in the same nesting.
    type Defaults: Copy;

    /// Every slot empty.
    fn empty() -> Self::Slots;

    /// Reads the next value of `map` into the slot at `index`, the
    /// parameter of `fields[index]`, recording coercions in `coerced`.
    fn read<'de, A: MapAccess<'de>>(
        slots: &mut Self::Slots,
        index: usize,
        fields: &[Field],
        coerced: Option<&Coerced>,
        map: &mut A,
    ) -> Result<(), A::Error>;

    /// The values of filled slots as the binder would bind them (see
    /// [`Slot::resolve`]), or `None` where the binder would have something
    /// to say.
    fn resolve(
        slots: Self::Slots,
        fields: &[Field],
        null_is_absent: bool,
        defaults: Self::Defaults,
    ) -> Option<Self::Values>;

    /// Takes every parameter out of arguments the binder accepted, the
    /// default for an absent one; `None` when any was refused (each
    /// refusal recorded in `arguments`). Every parameter is taken even
    /// after one is refused, so all refusals are reported together.
    fn take(arguments: &mut BoundArguments, fields: &[Field], defaults: Self::Defaults) -> Option<Self::Values>;
}

impl Params for () {
    type Slots = ();
    type Values = ();
    type Defaults = ();

    fn empty() {}

    fn read<'de, A: MapAccess<'de>>(
        _: &mut (),
        _: usize,
        _: &[Field],
        _: Option<&Coerced>,
        _: &mut A,
    ) -> Result<(), A::Error> {
        // No parameter has this index: the fields and the type disagree.
        Err(give_up())
    }

    fn resolve((): (), _: &[Field], _: bool, (): ()) -> Option<()> {
        Some(())
    }

    fn take(_: &mut BoundArguments, _: &[Field], (): ()) -> Option<()> {
        Some(())
    }
}

impl<H: DeserializeOwned, T: Params> Params for (H, T) {
    type Slots = (Slot<H>, T::Slots);
    type Values = (H, T::Values);
    type Defaults = (Option<fn() -> H>, T::Defaults);

    fn empty() -> Self::Slots {
        (Slot::Absent, T::empty())
    }

    // Inlined down the list: reading a key is then one comparison per
    // parameter before it, as in a `match` written by hand.
    #[inline(always)]
    fn read<'de, A: MapAccess<'de>>(
        slots: &mut Self::Slots,
        index: usize,
        fields: &[Field],
        coerced: Option<&Coerced>,
        map: &mut A,
    ) -> Result<(), A::Error> {
        match (index, fields) {
            (0, [field, ..]) => slots.0.fill(map.next_value_seed(ParamSeed::<H>::new(field, coerced))?),
            (_, [_, rest @ ..]) => T::read(&mut slots.1, index - 1, rest, coerced, map),
            (_, []) => Err(give_up()),
        }
    }

    // Inlined as `read` is: the defaults are constants at the call.
    #[inline(always)]
    fn resolve(
        (slot, slots): Self::Slots,
        fields: &[Field],
        null_is_absent: bool,
        (default, defaults): Self::Defaults,
    ) -> Option<Self::Values> {
        // More types than fields: the fields and the type disagree.
        let [field, rest @ ..] = fields else { return None };
        let value = match default {
            Some(default) => slot.resolve_or(field, null_is_absent, default)?,
            None => slot.resolve(field)?,
        };
        Some((value, T::resolve(slots, rest, null_is_absent, defaults)?))
    }

    fn take(
        arguments: &mut BoundArguments,
        fields: &[Field],
        (default, defaults): Self::Defaults,
    ) -> Option<Self::Values> {
        let [field, rest @ ..] = fields else { return None };
        let value = match default {
            Some(default) => arguments.take_or_else(&field.name, default),
            None => arguments.take(&field.name),
        };
        let values = T::take(arguments, rest, defaults);
        Some((value?, values?))
    }
}

/// Parses the arguments as sent into the slots of `P`, whose parameters are
/// `fields` in order; `index` finds a key's parameter (the tool's own
/// `match` over its names, which beats any search of `fields`). With
/// `coerced` (lenient mode), a parameter's own value may be coerced as the
/// binder would, its warning recorded there. `None` (a key that names no
/// parameter, a value that does not fit) sends the call to the full binder.
pub fn parse_params<P: Params>(
    arguments: &Arguments<'_>,
    fields: &[Field],
    coerced: Option<&Coerced>,
    index: fn(&str) -> Option<usize>,
) -> Option<P::Slots> {
    parse_arguments(
        arguments,
        ParamsVisitor::<P> {
            fields,
            coerced,
            index,
            marker: PhantomData,
        },
    )
}

struct ParamsVisitor<'f, P> {
    fields: &'f [Field],
    coerced: Option<&'f Coerced>,
    index: fn(&str) -> Option<usize>,
    marker: PhantomData<fn() -> P>,
}

impl<'de, P: Params> Visitor<'de> for ParamsVisitor<'_, P> {
    type Value = P::Slots;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the tool's arguments")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<P::Slots, A::Error> {
        let mut slots = P::empty();
        while let Some(index) = map.next_key_seed(KeyIndex(self.index))? {
            let index = index.ok_or_else(give_up)?;
            P::read(&mut slots, index, self.fields, self.coerced, &mut map)?;
        }
        Ok(slots)
    }
}

/// Reads a key as the index of the parameter it names, without copying
/// it; `None` for a key that names none.
struct KeyIndex(fn(&str) -> Option<usize>);

impl<'de> DeserializeSeed<'de> for KeyIndex {
    type Value = Option<usize>;

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<Option<usize>, D::Error> {
        deserializer.deserialize_identifier(self)
    }
}

impl<'de> Visitor<'de> for KeyIndex {
    type Value = Option<usize>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a parameter name")
    }

    fn visit_str<E: de::Error>(self, key: &str) -> Result<Option<usize>, E> {
        Ok((self.0)(key))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ToolParam;

    fn fields() -> Vec<Field> {
        vec![
            Field::new("name", String::shape(), false, "String"),
            Field::new("count", u32::shape(), true, "u32"),
        ]
    }

    type Both = (String, (u32, ()));

    fn index(key: &str) -> Option<usize> {
        ["name", "count"].iter().position(|name| *name == key)
    }

    #[test]
    fn each_key_fills_its_own_slot_in_any_order() {
        let arguments = r#"{"count": 3, "name": "a"}"#.into();
        let (name, (count, ())) = parse_params::<Both>(&arguments, &fields(), None, index).unwrap();
        assert!(matches!(name, Slot::Given(ref n) if n == "a"), "{name:?}");
        assert!(matches!(count, Slot::Given(3)), "{count:?}");
        let (name, (count, ())) = parse_params::<Both>(&"{}".into(), &fields(), None, index).unwrap();
        assert!(matches!((name, count), (Slot::Absent, Slot::Absent)));
    }

    #[test]
    fn an_unknown_or_repeated_key_or_a_misfit_gives_up() {
        for text in [
            r#"{"name": "a", "other": 1}"#,
            r#"{"name": "a", "name": "b"}"#,
            r#"{"count": "3"}"#,
            r#"[1, 2]"#,
            r#"{"name": "a"} {}"#,
        ] {
            assert!(
                parse_params::<Both>(&text.into(), &fields(), None, index).is_none(),
                "{text}"
            );
        }
        // More fields than parameter types: the extra one is never read.
        let arguments = r#"{"count": 1}"#.into();
        assert!(parse_params::<(String, ())>(&arguments, &fields(), None, index).is_none());
    }

    fn seven() -> u32 {
        7
    }

    /// `count` defaults to 7; `name` has none.
    const DEFAULTS: <Both as Params>::Defaults = (None, (Some(seven), ()));

    #[test]
    fn resolving_fills_a_default_and_leaves_a_missing_value_to_the_binder() {
        let read = |text: &str| parse_params::<Both>(&text.into(), &fields(), None, index).unwrap();
        let resolved = Both::resolve(read(r#"{"name": "a"}"#), &fields(), false, DEFAULTS);
        assert_eq!(resolved, Some(("a".to_owned(), (7, ()))));
        // A `null` for a defaulted parameter is the binder's to replace,
        // unless `null` stands for "not given".
        let null = r#"{"name": "a", "count": null}"#;
        assert_eq!(Both::resolve(read(null), &fields(), false, DEFAULTS), None);
        assert_eq!(
            Both::resolve(read(null), &fields(), true, DEFAULTS),
            Some(("a".to_owned(), (7, ())))
        );
        assert_eq!(Both::resolve(read(r#"{"count": 1}"#), &fields(), false, DEFAULTS), None);
    }

    #[test]
    fn taking_applies_defaults_and_reports_every_refusal_together() {
        let bound = |value: serde_json::Value| BoundArguments::new(value.as_object().unwrap().clone());
        let mut arguments = bound(serde_json::json!({"name": "a"}));
        let taken = Both::take(&mut arguments, &fields(), DEFAULTS);
        assert_eq!(taken, Some(("a".to_owned(), (7, ()))));
        assert!(arguments.into_errors().is_empty());
        // Both values are refused by their types: both are reported.
        let mut arguments = bound(serde_json::json!({"name": 1, "count": "x"}));
        assert_eq!(Both::take(&mut arguments, &fields(), DEFAULTS), None);
        let refused: Vec<String> = arguments.into_errors().iter().map(|e| e.to_string()).collect();
        assert_eq!(refused.len(), 2, "{refused:?}");
        assert!(
            refused[0].contains("name") && refused[1].contains("count"),
            "{refused:?}"
        );
    }
}
