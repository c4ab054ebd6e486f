//! Parsing, naming and serialising `HashForm`, the config-level choice of jhash.

use futexsim::hash::HashForm;

#[test]
fn parses_its_own_names() {
    for form in HashForm::ALL {
        assert_eq!(form.name().parse::<HashForm>(), Ok(form));
        assert_eq!(form.to_string(), form.name());
    }
    assert_eq!("lookup2".parse(), Ok(HashForm::Lookup2));
    assert_eq!("lookup3".parse(), Ok(HashForm::Lookup3));
}

#[test]
fn rejects_unknown_names_listing_valid_ones() {
    let err = "lookup4".parse::<HashForm>().unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("lookup4"), "{msg}");
    assert!(msg.contains("lookup2") && msg.contains("lookup3"), "{msg}");
    assert!("Lookup3".parse::<HashForm>().is_err());
}

#[test]
fn serde_uses_lowercase_names() {
    assert_eq!(
        serde_json::to_string(&HashForm::Lookup2).unwrap(),
        "\"lookup2\""
    );
    assert_eq!(
        serde_json::from_str::<HashForm>("\"lookup3\"").unwrap(),
        HashForm::Lookup3
    );
}
