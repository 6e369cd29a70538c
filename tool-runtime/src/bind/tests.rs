use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::*;
use crate::ToolParam;
use crate::call::CallArguments;
use crate::schema::{Constraints, Field, ObjectShape, Pattern, Shape};

fn params(fields: Vec<Field>) -> ObjectShape {
    ObjectShape::new(fields, true)
}

/// How many different values `items` holds.
fn distinct(items: &[Value]) -> usize {
    items.len() - repeats(items).len()
}

fn one(name: &str, shape: Shape) -> ObjectShape {
    params(vec![Field::new(name, shape.describe("d"), false, "T")])
}

/// Normalizes `args` and returns the result with its codes.
fn run(object: &ObjectShape, args: Value, mode: BindMode) -> (Value, Vec<String>, Vec<String>) {
    let mut map = argument_object(CallArguments::Json(args).into(), BindMode::Lenient)
        .unwrap()
        .0;
    let report = normalize(object, &mut map, mode, false);
    let warnings = report.warnings.iter().map(Warning::code_path).collect();
    let errors = report.errors.iter().map(CallError::code_path).collect();
    (Value::Object(map), warnings, errors)
}

fn lenient(object: &ObjectShape, args: Value) -> (Value, Vec<String>, Vec<String>) {
    run(object, args, BindMode::Lenient)
}

#[test]
fn valid_arguments_pass_untouched() {
    let object = params(vec![
        Field::new("n", u8::shape(), false, "u8"),
        Field::new("s", String::shape(), false, "String"),
        Field::new("v", Vec::<f64>::shape(), false, "Vec<f64>"),
    ]);
    let args = json!({"n": 255, "s": "x", "v": [1, 2.5]});
    let (out, warnings, errors) = lenient(&object, args.clone());
    assert_eq!(out, args);
    assert!(warnings.is_empty() && errors.is_empty());
}

#[test]
fn integer_type_ranges_are_enforced() {
    let object = one("n", i8::shape());
    assert_eq!(lenient(&object, json!({"n": 128})).2, ["out_of_range:n"]);
    assert_eq!(lenient(&object, json!({"n": -129})).2, ["out_of_range:n"]);
    assert!(lenient(&object, json!({"n": -128})).2.is_empty());
    let object = one("n", u64::shape());
    assert!(lenient(&object, json!({"n": u64::MAX})).2.is_empty());
    assert_eq!(lenient(&object, json!({"n": -1})).2, ["out_of_range:n"]);
}

#[test]
fn integer_strings_in_float_notation_convert() {
    let object = one("n", u32::shape());
    let (out, warnings, _) = lenient(&object, json!({"n": " 1e3 "}));
    assert_eq!(out["n"], json!(1000));
    assert_eq!(warnings, ["string_literal_converted_to_integer:n"]);
    assert_eq!(
        lenient(&object, json!({"n": "2.5"})).2,
        ["unsupported_integer_literal:n"]
    );
}

#[test]
fn f32_numbers_beyond_its_range_are_out_of_range() {
    let object = one("x", f32::shape());
    assert_eq!(lenient(&object, json!({"x": 1e300})).2, ["out_of_range:x"]);
    assert!(lenient(&object, json!({"x": 1e30})).2.is_empty());
}

#[test]
fn number_bounds_apply_to_floats() {
    let shape = f64::shape().constrain(Constraints {
        minimum: Some(serde_json::Number::from_f64(0.0).unwrap()),
        maximum: Some(serde_json::Number::from_f64(1.0).unwrap()),
        ..Constraints::default()
    });
    let object = one("p", shape);
    assert_eq!(lenient(&object, json!({"p": 1.5})).2, ["out_of_range:p"]);
    assert!(lenient(&object, json!({"p": 0.5})).2.is_empty());
}

#[test]
fn string_lengths_count_characters_and_patterns_search() {
    let shape = String::shape().constrain(Constraints {
        min_length: Some(2),
        max_length: Some(3),
        pattern: Some(Pattern::new("^[a-zé]+$").unwrap()),
        ..Constraints::default()
    });
    let object = one("s", shape);
    assert!(
        lenient(&object, json!({"s": "éé"})).2.is_empty(),
        "two characters, four bytes"
    );
    assert_eq!(lenient(&object, json!({"s": "abcd"})).2, ["out_of_range:s"]);
    assert_eq!(lenient(&object, json!({"s": "AB"})).2, ["pattern_mismatch:s"]);
}

#[test]
fn item_bounds_apply_to_lists() {
    let shape = Vec::<u8>::shape().constrain(Constraints {
        min_items: Some(1),
        max_items: Some(2),
        ..Constraints::default()
    });
    let object = one("v", shape);
    assert_eq!(lenient(&object, json!({"v": []})).2, ["out_of_range:v"]);
    assert_eq!(lenient(&object, json!({"v": [1, 2, 3]})).2, ["out_of_range:v"]);
}

#[test]
fn a_scalar_wrapped_in_a_list_is_then_coerced_as_an_element() {
    let object = one("v", Vec::<u32>::shape());
    let (out, warnings, errors) = lenient(&object, json!({"v": "7"}));
    assert!(errors.is_empty());
    assert_eq!(out["v"], json!([7]));
    assert_eq!(
        warnings,
        ["scalar_coerced_to_list:v", "string_literal_converted_to_integer:v[0]"]
    );
}

#[test]
fn objects_are_never_stringified_and_strings_never_parsed_for_strings() {
    let object = one("s", String::shape());
    assert_eq!(lenient(&object, json!({"s": [1]})).2, ["type_mismatch:s"]);
    let (out, warnings, _) = lenient(&object, json!({"s": "[1, 2]"}));
    assert_eq!(out["s"], json!("[1, 2]"));
    assert!(warnings.is_empty());
}

#[derive(serde::Deserialize)]
#[allow(dead_code)]
struct Point {
    x: i32,
}

fn point_shape() -> Shape {
    Shape::new(crate::schema::Kind::Object(params(vec![Field::new(
        "x",
        i32::shape().describe("x"),
        false,
        "i32",
    )])))
}

#[test]
fn nested_structs_in_lists_in_maps_report_full_paths() {
    // BTreeMap<String, Vec<Point>>
    let shape = Shape::new(crate::schema::Kind::Map {
        values: Box::new(Shape::new(crate::schema::Kind::Array {
            items: Box::new(point_shape()),
            unique: false,
        })),
    });
    let object = one("routes", shape);
    let args = json!({"routes": {"north": [{"x": 1}, {"x": "2"}, {"y": 3}], "south": "{\"x\": 4}"}});
    let (out, warnings, errors) = lenient(&object, args);
    assert_eq!(
        warnings,
        [
            "string_literal_converted_to_integer:routes.north[1].x",
            "unknown_parameter:routes.north[2].y",
            "scalar_coerced_to_list:routes.south",
            "json_string_parsed:routes.south[0]",
        ]
    );
    assert_eq!(errors, ["missing_required:routes.north[2].x"]);
    assert_eq!(out["routes"]["north"][1], json!({"x": 2}));
    assert_eq!(out["routes"]["north"][2], json!({}), "unknown nested keys are removed");
}

#[test]
fn bound_nested_values_deserialize() {
    let shape = Shape::new(crate::schema::Kind::Map {
        values: Box::new(point_shape()),
    });
    let object = one("points", shape);
    let (out, _, errors) = lenient(&object, json!({"points": {"a": {"x": "5"}}}));
    assert!(errors.is_empty());
    let mut arguments = BoundArguments::new(out.as_object().unwrap().clone());
    let points: BTreeMap<String, Point> = arguments.take("points").unwrap();
    assert_eq!(points["a"].x, 5);
}

#[test]
fn strict_mode_coerces_nothing() {
    let object = params(vec![
        Field::new("n", u32::shape(), false, "u32"),
        Field::new("b", bool::shape(), false, "bool"),
        Field::new("s", String::shape(), false, "String"),
        Field::new("v", Vec::<String>::shape(), false, "Vec<String>"),
        Field::new("w", Point::shape_for_tests(), false, "Point"),
    ]);
    let args = json!({"n": 1.0, "b": "true", "s": 5, "v": "a", "w": "{\"x\": 1}", "maxN": 1});
    let (out, warnings, errors) = run(&object, args.clone(), BindMode::Strict);
    assert!(warnings.is_empty());
    assert_eq!(
        errors,
        [
            "type_mismatch:n",
            "type_mismatch:b",
            "type_mismatch:s",
            "type_mismatch:v",
            "type_mismatch:w",
            "unknown_parameter:maxN",
        ]
    );
    assert_eq!(out, args, "strict mode changes nothing");
}

impl Point {
    fn shape_for_tests() -> Shape {
        point_shape()
    }
}

#[test]
fn loose_key_matching_ignores_case_and_separators() {
    assert_eq!(loose_name("maxResults"), loose_name("max_results"));
    assert_eq!(loose_name("Max-Results"), loose_name("max_results"));
    assert_ne!(loose_name("maxResult"), loose_name("max_results"));
    // A key that is itself a parameter is no other parameter's alias.
    let object = params(vec![
        Field::new("max_results", u32::shape().describe("d"), true, "u32"),
        Field::new("maxresults", u32::shape().describe("d"), true, "u32"),
    ]);
    let (out, warnings, _) = lenient(&object, json!({"maxresults": 1}));
    assert_eq!(out, json!({"maxresults": 1}));
    assert!(warnings.is_empty(), "{warnings:?}");
}

/// A remote schema may have thousands of properties and a model may send
/// thousands of keys: finding aliases and unknown keys costs a lookup per
/// key, not a scan of every field per key per missing field (which made
/// this test run for hours).
#[test]
fn wide_objects_bind_with_many_unknown_keys() {
    let fields = (0..2_000)
        .map(|i| Field::new(format!("field_{i}"), Option::<u32>::shape().describe("d"), false, "u32"))
        .collect();
    let object = params(fields);
    let mut args: serde_json::Map<String, Value> = (0..10_000).map(|i| (format!("k{i}"), json!(0))).collect();
    // Two spellings of one field: the first in the map's order is read.
    args.insert("Field-7".into(), json!(7));
    args.insert("field7".into(), json!(8));
    let (out, warnings, errors) = lenient(&object, Value::Object(args));
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(out["field_7"], json!(7));
    assert_eq!(out["field7"], json!(8), "an ignored key stays in the raw arguments");
    assert_eq!(warnings[0], "parameter_name_normalized:field_7");
    assert_eq!(
        warnings.iter().filter(|w| w.starts_with("unknown_parameter:")).count(),
        MAX_RECORDED_PROBLEMS
    );
}

#[test]
fn unknown_keys_list_at_most_twenty_parameters_and_suggest_the_closest() {
    let fields = (0..30)
        .map(|i| Field::new(format!("field_{i}"), Option::<u32>::shape().describe("d"), false, "u32"))
        .collect();
    let object = params(fields);
    let mut map = json!({"feild_3": 1}).as_object().unwrap().clone();
    let report = normalize(&object, &mut map, BindMode::Lenient, false);
    let detail = &report.warnings[0].detail;
    assert!(detail.contains("(did you mean `field_3`?)"), "{detail}");
    assert!(detail.contains("`field_19` and 10 more"), "{detail}");
    assert!(!detail.contains("field_20"), "{detail}");
}

#[test]
fn deep_values_are_a_bounded_error() {
    let object = one("v", Value::shape());
    let mut deep = json!(1);
    for _ in 0..(MAX_DEPTH + 5) {
        deep = json!([deep]);
    }
    assert_eq!(lenient(&object, json!({ "v": deep })).2, ["out_of_range:v"]);
}

fn parse_raw_arguments(text: &str) -> Result<Map<String, Value>, CallError> {
    argument_object(text.into(), BindMode::Lenient).map(|(map, _)| map)
}

#[test]
fn raw_text_rules() {
    assert!(parse_raw_arguments("").unwrap().is_empty());
    assert!(parse_raw_arguments("  null ").unwrap().is_empty());
    assert_eq!(
        parse_raw_arguments("[1]").unwrap_err().code,
        ErrorCode::ArgumentsNotObject
    );
    assert_eq!(parse_raw_arguments("{").unwrap_err().code, ErrorCode::JsonParseError);
}

#[test]
fn valid_json_that_is_no_object_is_never_a_parse_error() {
    for text in [
        "42",
        "true",
        "[1]",
        r#""hello""#,
        r#""""#,
        r#""[1]""#,
        r#""null""#,
        r#""\"{}\"""#,
    ] {
        for arguments in [
            CallArguments::Text(text.to_owned()),
            CallArguments::Json(Value::String(text.to_owned())),
        ] {
            let code = argument_object(arguments.into(), BindMode::Lenient).unwrap_err().code;
            assert_eq!(code, ErrorCode::ArgumentsNotObject, "{text}");
        }
    }
    for value in [json!(42), json!([1]), json!(true)] {
        let code = argument_object(value.into(), BindMode::Lenient).unwrap_err().code;
        assert_eq!(code, ErrorCode::ArgumentsNotObject);
    }
    // An object encoded twice is parsed, with a warning that has no path:
    // as raw text, a JSON string holding it; as a `Value`, a string
    // holding it (a `Value` follows the rules of the JSON it is).
    for arguments in [
        CallArguments::Text(r#""{\"a\": 1}""#.to_owned()),
        CallArguments::Json(json!(r#"{"a": 1}"#)),
    ] {
        let (map, warning) = argument_object(arguments.clone().into(), BindMode::Lenient).unwrap();
        assert_eq!(Value::Object(map), json!({"a": 1}));
        let warning = warning.expect("a warning");
        assert_eq!(warning.code_path(), "json_string_parsed");
        // Strict mode decodes nothing: a string is no object.
        let error = argument_object(arguments.into(), BindMode::Strict).unwrap_err();
        assert_eq!(error.code, ErrorCode::ArgumentsNotObject, "{error:?}");
    }
    // Only raw text can be no JSON; a string `Value` holding no object
    // (empty, or no JSON) is a string that is no object.
    assert_eq!(
        argument_object("nope".into(), BindMode::Lenient).unwrap_err().code,
        ErrorCode::JsonParseError
    );
    for text in ["nope", "", "null", "{"] {
        let code = argument_object(json!(text).into(), BindMode::Lenient).unwrap_err().code;
        assert_eq!(code, ErrorCode::ArgumentsNotObject, "{text:?}");
    }
}

#[test]
fn a_single_object_for_a_list_of_objects_is_wrapped() {
    let object = one("rows", Vec::<BTreeMap<String, u8>>::shape());
    let (out, warnings, errors) = lenient(&object, json!({"rows": {"a": 1}}));
    assert_eq!(out, json!({"rows": [{"a": 1}]}));
    assert_eq!(warnings, ["scalar_coerced_to_list:rows"]);
    assert!(errors.is_empty());
    let (_, _, errors) = run(&object, json!({"rows": {"a": 1}}), BindMode::Strict);
    assert_eq!(errors, ["type_mismatch:rows"]);
    // Not for a list of scalars.
    let object = one("ids", Vec::<u8>::shape());
    assert_eq!(lenient(&object, json!({"ids": {"a": 1}})).2, ["type_mismatch:ids"]);
}

#[test]
fn expected_phrases_name_types_bounds_and_values() {
    let shape = u32::shape().constrain(Constraints {
        minimum: Some(1.into()),
        maximum: Some(10.into()),
        ..Constraints::default()
    });
    assert_eq!(expected(&shape), "an integer from 1 to 10");
    let e = Shape::new(crate::schema::Kind::Enum(vec!["read".into(), "write".into()]));
    assert_eq!(expected(&e), "one of \"read\", \"write\"");
    assert_eq!(expected(&Vec::<String>::shape()), "a list of strings");
    // One of a unit is said in the singular.
    let one_char = String::shape().constrain(Constraints {
        min_length: Some(1),
        ..Constraints::default()
    });
    assert_eq!(expected(&one_char), "a string of at least 1 character");
    let (_, _, errors) = lenient(&one("s", one_char), json!({"s": ""}));
    assert_eq!(errors, ["out_of_range:s"]);
    let one_item = Vec::<u8>::shape().constrain(Constraints {
        max_items: Some(1),
        ..Constraints::default()
    });
    assert_eq!(
        expected(&one_item),
        "a list of integers from 0 to 255 of at most 1 item"
    );
}

/// That binding a large set stays near-linear (it rescanned the list for
/// each item) is measured in instructions by `cargo bench --bench dispatch
/// -- scaling`, not timed here; this checks the answer at that scale.
#[test]
fn a_large_set_is_bound_with_its_items_counted_right() {
    let object = one("ids", std::collections::BTreeSet::<u64>::shape());
    let args = |n: u64| json!({ "ids": (0..n).collect::<Vec<_>>() });
    for n in [40_000, 100_000] {
        let (out, warnings, errors) = lenient(&object, args(n));
        assert!(warnings.is_empty() && errors.is_empty(), "{errors:?}");
        assert_eq!(out["ids"].as_array().map(Vec::len), Some(n as usize));
    }
    // A set's bound counts distinct items: 50,000 and a repeat fit 50,000.
    let bounded = one(
        "ids",
        std::collections::BTreeSet::<u64>::shape().constrain(Constraints::default().max_items(50_000)),
    );
    let mut repeated = (0..50_000u64).collect::<Vec<_>>();
    repeated.push(7);
    let (_, _, errors) = lenient(&bounded, json!({ "ids": repeated.clone() }));
    assert!(errors.is_empty(), "{errors:?}");
    repeated.push(50_000);
    let (_, _, errors) = lenient(&bounded, json!({ "ids": repeated }));
    assert_eq!(errors, ["out_of_range:ids"]);
}

#[test]
fn sets_count_values_equal_whatever_their_key_order_once() {
    let mut reordered = serde_json::Map::new();
    reordered.insert("b".into(), json!(2));
    reordered.insert("a".into(), json!(1));
    let items = [
        json!({"a": 1, "b": 2}),
        Value::Object(reordered),
        json!({"a": 1, "b": 3}),
    ];
    assert_eq!(distinct(&items), 2);
    assert_eq!(distinct(&[json!(1), json!("1"), json!(1)]), 2);
}

#[test]
fn integers_are_read_exactly_or_refused() {
    let parsed = |text: &str| -> Value { serde_json::from_str(text).unwrap() };
    let object = one("n", i64::shape());
    let below = parsed(r#"{"n": -9223372036854775809}"#);
    let (_, warnings, errors) = lenient(&object, below);
    assert_eq!(errors, ["out_of_range:n"]);
    assert!(warnings.is_empty());
    assert!(lenient(&object, json!({"n": i64::MIN})).2.is_empty());
    assert_eq!(
        lenient(&object, json!({"n": "-9223372036854775809"})).2,
        ["out_of_range:n"]
    );
    // A float past 2^53 may not be the integer the model wrote.
    let object = one("n", u64::shape());
    assert_eq!(
        lenient(&object, parsed(r#"{"n": 9007199254740993.0}"#)).2,
        ["out_of_range:n"]
    );
    assert!(lenient(&object, parsed(r#"{"n": 9007199254740991.0}"#)).2.is_empty());
    // Strings in float notation are read from their digits.
    for (text, n) in [
        ("1e19", 10_000_000_000_000_000_000u64),
        ("1.5e1", 15),
        ("18446744073709551615", u64::MAX),
    ] {
        let (out, _, errors) = lenient(&object, json!({ "n": text }));
        assert!(errors.is_empty(), "{text}: {errors:?}");
        assert_eq!(out["n"], json!(n), "{text}");
    }
    for (text, code) in [
        ("1.00000000000000000001", "unsupported_integer_literal:n"),
        ("12345678901234567891e-1", "unsupported_integer_literal:n"),
        ("1e400", "out_of_range:n"),
        ("1e99999999999", "out_of_range:n"),
        ("inf", "unsupported_integer_literal:n"),
    ] {
        assert_eq!(lenient(&object, json!({ "n": text })).2, [code], "{text}");
    }
    // i128/u128 take what JSON carries exactly here: i64::MIN to u64::MAX.
    let object = one("n", i128::shape());
    let (out, _, errors) = lenient(&object, json!({"n": "18446744073709551615"}));
    assert!(errors.is_empty());
    assert_eq!(out["n"], json!(u64::MAX));
    let (_, warnings, errors) = lenient(&object, json!({"n": "170141183460469231731687303715884105727"}));
    assert_eq!(errors, ["out_of_range:n"]);
    assert!(warnings.is_empty());
    assert_eq!(lenient(&object, parsed(r#"{"n": 1e20}"#)).2, ["out_of_range:n"]);
}

/// Near-linearity (removing a key shifted what followed) is measured by
/// `cargo bench --bench dispatch -- scaling`; this checks the answer.
#[test]
fn many_unknown_keys_in_a_nested_object_are_each_removed() {
    let inner = params(vec![Field::new("a", u8::shape().describe("d"), false, "u8")]);
    let object = one("inner", Shape::new(Kind::Object(inner)));
    let args = |n: usize| {
        let mut map = serde_json::Map::new();
        map.insert("a".into(), json!(1));
        for i in 0..n {
            map.insert(format!("k{i}"), json!(0));
        }
        json!({ "inner": Value::Object(map) })
    };
    for n in [10, 100_000] {
        let (out, warnings, errors) = lenient(&object, args(n));
        assert_eq!(
            out,
            json!({"inner": {"a": 1}}),
            "unknown keys of a nested object are removed"
        );
        // Every key is removed; the first ones are each recorded.
        assert_eq!(warnings.len(), n.min(MAX_RECORDED_PROBLEMS));
        assert!(errors.is_empty(), "{errors:?}");
    }
}

/// A long enum (a remote schema may list thousands of values) binds as a
/// short one does, each value looked up rather than scanned; what a
/// problem says lists at most 20 values, so neither the work nor the text
/// grows with the enum.
#[test]
fn long_enums_bind_as_short_ones_and_are_described_briefly() {
    let mut values: Vec<String> = (0..1000).map(|i| format!("v{i}")).collect();
    values.push("Twice".into());
    values.push("TWICE".into());
    let list = Shape::new(crate::schema::Kind::Array {
        items: Box::new(Shape::new(crate::schema::Kind::Enum(values))),
        unique: false,
    });
    let object = one("tags", list);
    let (out, warnings, errors) = lenient(&object, json!({"tags": ["v7", " V999 ", "twice", "nope", 3]}));
    assert_eq!(out["tags"][0], "v7");
    assert_eq!(out["tags"][1], "v999", "folded to the one value it matches");
    assert_eq!(warnings, ["enum_case_folded:tags[1]"]);
    assert_eq!(
        errors,
        [
            "enum_out_of_range:tags[2]",
            "enum_out_of_range:tags[3]",
            "type_mismatch:tags[4]"
        ]
    );
    let mut map = json!({"tags": ["nope"]}).as_object().unwrap().clone();
    let report = normalize(&object, &mut map, BindMode::Lenient, false);
    let detail = &report.errors[0].detail;
    assert!(detail.contains("\"v19\" and 982 more, got"), "{detail}");
    assert!(!detail.contains("\"v20\""), "{detail}");
}

/// Past the problems recorded in detail, a wrong value is only counted.
#[test]
fn wrong_values_past_the_recorded_problems_are_counted() {
    let values: Vec<String> = (0..100).map(|i| format!("v{i}")).collect();
    let list = Shape::new(crate::schema::Kind::Array {
        items: Box::new(Shape::new(crate::schema::Kind::Enum(values))),
        unique: false,
    });
    let mut map = json!({"tags": vec![json!(0); 10_000]}).as_object().unwrap().clone();
    let report = normalize(&one("tags", list), &mut map, BindMode::Lenient, false);
    assert_eq!(report.errors.len() + report.omitted_errors, 10_000);
    assert_eq!(report.errors.len(), 100);
}

/// A long list of numbers is looked up, not scanned per item, by the rule a
/// short one is scanned with: `2` and `2.0` are one number, integers past
/// 2^53 compare exactly.
#[test]
fn long_lists_of_numbers_bind_as_short_ones() {
    let big = 1u64 << 60;
    let listed: Vec<Value> = (0..1_000)
        .map(|i| json!(i * 2))
        .chain([json!(0.5), json!(big), json!(-3)])
        .collect();
    let probes = [
        json!(4),
        json!(4.0),
        json!(5),
        json!(0.5),
        json!(-0.0),
        json!(big),
        json!(big + 1),
        json!(-3),
        json!("8"),
    ];
    for kind in [i64::shape(), f64::shape()] {
        let long = kind.clone().constrain(Constraints {
            values: Some(listed.clone()),
            ..Constraints::default()
        });
        for probe in &probes {
            let scanned = long.value_listed(probe) || probe.is_string();
            let (_, _, errors) = lenient(&one("n", long.clone()), json!({ "n": probe }));
            let fractional_for_integer = kind.type_name() == "integer" && *probe == json!(0.5);
            if !fractional_for_integer {
                assert_eq!(
                    errors.is_empty(),
                    scanned,
                    "{probe} against a long list of {}",
                    kind.type_name()
                );
            }
        }
    }
    // Many items, each looked up.
    let items = Vec::<u32>::shape();
    let Kind::Array { items: item, .. } = &items.kind else {
        unreachable!()
    };
    let item = (**item).clone().constrain(Constraints {
        values: Some(listed.clone()),
        ..Constraints::default()
    });
    let list = Shape::new(Kind::Array {
        items: Box::new(item),
        unique: false,
    })
    .describe("d");
    let sent: Vec<u64> = (0..50_000).map(|i| (i % 1_000) * 2).collect();
    let (_, _, errors) = lenient(&one("ids", list), json!({ "ids": sent }));
    assert!(errors.is_empty(), "{errors:?}");
}

/// A default that breaks its own bound is found in a field of an object a
/// parameter takes, inside a list, as at the top: serde gives the field
/// that default when the key is left out.
#[test]
fn a_nested_field_s_default_that_breaks_its_bound_is_found() {
    use crate::schema::Constraints;
    let mut size = u32::shape().describe("Page size");
    size.constraints = Constraints {
        minimum: Some(1.into()),
        ..Constraints::default()
    };
    let page = Shape::new(crate::schema::Kind::Object(params(vec![
        Field::new("size", size, true, "u32").with_default_value(Some(json!(0))),
    ])));
    let pages = Shape::new(crate::schema::Kind::Array {
        items: Box::new(page),
        unique: false,
    });
    let problem = super::default_problem(&one("pages", pages)).expect("the default breaks its bound");
    assert!(problem.contains("the default of `size`"), "{problem}");
}
