//! Reading a stored run's configuration back for its report. Each workload
//! declares a view of the fields its report prints; runs stored by older
//! versions lack some and imported runs carry others, so a field that is
//! absent or of another type reads as its default instead of failing the
//! whole view.

use serde::{Deserialize, Deserializer, de::DeserializeOwned};

/// The view `T` of a stored configuration; one that is not an object
/// reads as `T`'s default (serde would read an array's items as fields).
pub fn view<T: DeserializeOwned + Default>(config: &serde_json::Value) -> T {
    if !config.is_object() {
        return T::default();
    }
    serde_json::from_value(config.clone()).unwrap_or_default()
}

/// A view struct: `Debug`, `Default`, and every field read [`lenient`]ly,
/// so a field that is absent or of another type reads as its default.
macro_rules! view_struct {
    ($(#[$m:meta])* pub struct $name:ident {
        $($(#[$fm:meta])* pub $f:ident: $t:ty,)*
    }) => {
        $(#[$m])*
        #[derive(Debug, Default, serde::Deserialize)]
        #[serde(default)]
        pub struct $name {
            $(
                $(#[$fm])*
                #[serde(deserialize_with = "crate::workload::stored::lenient")]
                pub $f: $t,
            )*
        }
    };
}
pub(crate) use view_struct;

/// serde `deserialize_with` for view fields: the value, or the field's
/// default when it has another type.
pub fn lenient<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: DeserializeOwned + Default,
{
    let v = serde_json::Value::deserialize(d)?;
    Ok(serde_json::from_value(v).unwrap_or_default())
}

/// A configuration value printed as it was stored: a string as it is,
/// another value as JSON, "?" when absent or null.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Text(Option<String>);

impl Text {
    pub fn of(v: serde_json::Value) -> Self {
        match v {
            serde_json::Value::String(s) => Text(Some(s)),
            serde_json::Value::Null => Text(None),
            v => Text(Some(v.to_string())),
        }
    }
}

impl From<String> for Text {
    fn from(s: String) -> Self {
        Text(Some(s))
    }
}

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        serde_json::Value::deserialize(d).map(Text::of)
    }
}

impl std::fmt::Display for Text {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0.as_deref().unwrap_or("?"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    view_struct! {
        pub struct View {
            pub mode: Text,
            pub size: Option<u64>,
            pub on: Option<bool>,
        }
    }

    #[test]
    fn text_shows_strings_bare_other_values_as_json_and_absence_as_a_question_mark() {
        let v: View = view(&json!({"mode": "thread"}));
        assert_eq!(v.mode.to_string(), "thread");
        let v: View = view(&json!({"mode": 64}));
        assert_eq!(v.mode.to_string(), "64");
        let v: View = view(&json!({"mode": {"list": [1]}}));
        assert_eq!(v.mode.to_string(), r#"{"list":[1]}"#);
        let v: View = view(&json!({"mode": null}));
        assert_eq!(v.mode.to_string(), "?");
        let v: View = view(&json!({}));
        assert_eq!(v.mode.to_string(), "?");
    }

    #[test]
    fn a_field_of_another_type_reads_as_its_default_and_keeps_the_others() {
        let v: View = view(&json!({"mode": "process", "size": "big", "on": true}));
        assert_eq!(v.size, None);
        assert_eq!(v.on, Some(true));
        assert_eq!(v.mode.to_string(), "process");
        let v: View = view(&json!({"size": -1, "on": 1}));
        assert_eq!((v.size, v.on), (None, None));
    }

    #[test]
    fn a_config_that_is_not_an_object_reads_as_the_default() {
        let v: View = view(&serde_json::Value::Null);
        assert_eq!((v.mode.to_string(), v.size), ("?".into(), None));
        let v: View = view(&json!([1, 2]));
        assert_eq!(v.size, None);
    }
}
