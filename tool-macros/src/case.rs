//! serde's `rename_all` rules, applied the way serde applies them, so the
//! schema names what serde will actually accept.

/// A `#[serde(rename_all = "...")]` rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RenameRule {
    Lower,
    Upper,
    Pascal,
    Camel,
    Snake,
    ScreamingSnake,
    Kebab,
    ScreamingKebab,
}

impl RenameRule {
    pub fn from_str(rule: &str) -> Option<Self> {
        Some(match rule {
            "lowercase" => RenameRule::Lower,
            "UPPERCASE" => RenameRule::Upper,
            "PascalCase" => RenameRule::Pascal,
            "camelCase" => RenameRule::Camel,
            "snake_case" => RenameRule::Snake,
            "SCREAMING_SNAKE_CASE" => RenameRule::ScreamingSnake,
            "kebab-case" => RenameRule::Kebab,
            "SCREAMING-KEBAB-CASE" => RenameRule::ScreamingKebab,
            _ => return None,
        })
    }

    /// Applies the rule to an enum variant, written in PascalCase.
    pub fn apply_to_variant(self, variant: &str) -> String {
        match self {
            RenameRule::Pascal => variant.to_owned(),
            RenameRule::Lower => variant.to_ascii_lowercase(),
            RenameRule::Upper => variant.to_ascii_uppercase(),
            RenameRule::Camel => {
                let mut chars = variant.chars();
                match chars.next() {
                    Some(first) => first.to_ascii_lowercase().to_string() + chars.as_str(),
                    None => String::new(),
                }
            }
            RenameRule::Snake => {
                let mut snake = String::new();
                for (i, ch) in variant.char_indices() {
                    if i > 0 && ch.is_uppercase() {
                        snake.push('_');
                    }
                    snake.push(ch.to_ascii_lowercase());
                }
                snake
            }
            RenameRule::ScreamingSnake => RenameRule::Snake.apply_to_variant(variant).to_ascii_uppercase(),
            RenameRule::Kebab => RenameRule::Snake.apply_to_variant(variant).replace('_', "-"),
            RenameRule::ScreamingKebab => RenameRule::ScreamingSnake.apply_to_variant(variant).replace('_', "-"),
        }
    }

    /// Applies the rule to a struct field, written in snake_case.
    pub fn apply_to_field(self, field: &str) -> String {
        match self {
            RenameRule::Lower | RenameRule::Snake => field.to_owned(),
            RenameRule::Upper | RenameRule::ScreamingSnake => field.to_ascii_uppercase(),
            RenameRule::Pascal => {
                let mut pascal = String::new();
                let mut capitalize = true;
                for ch in field.chars() {
                    if ch == '_' {
                        capitalize = true;
                    } else if capitalize {
                        pascal.push(ch.to_ascii_uppercase());
                        capitalize = false;
                    } else {
                        pascal.push(ch);
                    }
                }
                pascal
            }
            RenameRule::Camel => {
                let pascal = RenameRule::Pascal.apply_to_field(field);
                let mut chars = pascal.chars();
                match chars.next() {
                    Some(first) => first.to_ascii_lowercase().to_string() + chars.as_str(),
                    None => String::new(),
                }
            }
            RenameRule::Kebab => field.replace('_', "-"),
            RenameRule::ScreamingKebab => field.to_ascii_uppercase().replace('_', "-"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::RenameRule::*;

    #[test]
    fn variants_follow_serde() {
        let cases = [
            (Lower, "outcome"),
            (Upper, "OUTCOME"),
            (Pascal, "OutCome"),
            (Camel, "outCome"),
            (Snake, "out_come"),
            (ScreamingSnake, "OUT_COME"),
            (Kebab, "out-come"),
            (ScreamingKebab, "OUT-COME"),
        ];
        for (rule, expected) in cases {
            assert_eq!(rule.apply_to_variant("OutCome"), expected, "{rule:?}");
        }
    }

    #[test]
    fn fields_follow_serde() {
        let cases = [
            (Lower, "max_results"),
            (Upper, "MAX_RESULTS"),
            (Pascal, "MaxResults"),
            (Camel, "maxResults"),
            (Snake, "max_results"),
            (ScreamingSnake, "MAX_RESULTS"),
            (Kebab, "max-results"),
            (ScreamingKebab, "MAX-RESULTS"),
        ];
        for (rule, expected) in cases {
            assert_eq!(rule.apply_to_field("max_results"), expected, "{rule:?}");
        }
    }
}
