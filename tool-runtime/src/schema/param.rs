//! [`ToolParam`]: the types that can be tool parameters, and their shapes.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use serde_json::Value;

use super::{Kind, Shape};

/// A type that can be a tool parameter: it knows its [`Shape`]. A tool's
/// parameter is also `Deserialize` (serde reads it from the JSON the binder
/// produces), which `#[tool]` checks at the parameter; a type only returned
/// (for its output schema) needs none.
///
/// Implemented for `String`, `bool`, the integer and float types, `Option`,
/// `Vec`, `HashSet`/`BTreeSet`, `HashMap`/`BTreeMap<String, T>`,
/// `serde_json::Value`, and by `#[derive(ToolParam)]` for your own structs and
/// unit-variant enums. Not for context the runtime injects (`ToolContext`,
/// `State<T>`): those never appear in the schema.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool parameter",
    label = "this type does not implement `ToolParam`",
    note = "use a JSON-like type (String, bool, integers, floats, Option, Vec, sets, maps with String keys, serde_json::Value), or add `#[derive(ToolParam, Deserialize)]` to your struct or unit-variant enum"
)]
pub trait ToolParam {
    /// This type's shape. Called once per tool, when its definition is built.
    fn shape() -> Shape;
}

macro_rules! integer_params {
    ($($t:ty),*) => {$(
        impl ToolParam for $t {
            fn shape() -> Shape {
                Shape::new(Kind::Integer { min: <$t>::MIN as i128, max: <$t>::MAX as i128 })
            }
        }
    )*};
}
integer_params!(i8, i16, i32, i64, isize, u8, u16, u32, u64, usize, i128);

impl ToolParam for u128 {
    fn shape() -> Shape {
        Shape::new(Kind::Integer { min: 0, max: i128::MAX })
    }
}

impl ToolParam for f64 {
    fn shape() -> Shape {
        Shape::new(Kind::Number { single: false })
    }
}

impl ToolParam for f32 {
    fn shape() -> Shape {
        Shape::new(Kind::Number { single: true })
    }
}

impl ToolParam for bool {
    fn shape() -> Shape {
        Shape::new(Kind::Boolean)
    }
}

impl ToolParam for String {
    fn shape() -> Shape {
        Shape::new(Kind::String)
    }
}

impl ToolParam for Value {
    fn shape() -> Shape {
        Shape::new(Kind::Any)
    }
}

impl<T: ToolParam> ToolParam for Option<T> {
    fn shape() -> Shape {
        let mut shape = T::shape();
        shape.nullable = true;
        shape
    }
}

fn array_of<T: ToolParam>(unique: bool) -> Shape {
    Shape::new(Kind::Array {
        items: Box::new(T::shape()),
        unique,
    })
}

impl<T: ToolParam> ToolParam for Vec<T> {
    fn shape() -> Shape {
        array_of::<T>(false)
    }
}

impl<T: ToolParam + Eq + std::hash::Hash, S: std::hash::BuildHasher + Default> ToolParam for HashSet<T, S> {
    fn shape() -> Shape {
        array_of::<T>(true)
    }
}

impl<T: ToolParam + Ord> ToolParam for BTreeSet<T> {
    fn shape() -> Shape {
        array_of::<T>(true)
    }
}

fn map_of<T: ToolParam>() -> Shape {
    Shape::new(Kind::Map {
        values: Box::new(T::shape()),
    })
}

impl<T: ToolParam, S: std::hash::BuildHasher + Default> ToolParam for HashMap<String, T, S> {
    fn shape() -> Shape {
        map_of::<T>()
    }
}

impl<T: ToolParam> ToolParam for BTreeMap<String, T> {
    fn shape() -> Shape {
        map_of::<T>()
    }
}

impl<T: ToolParam> ToolParam for Box<T> {
    fn shape() -> Shape {
        T::shape()
    }
}
