//! Examples from the Python tests (tests/eye/test_escape_rule.py and friends), with the answers of
//! the Python reference (`envelock.eye.reference`).

use crate::chars::skeleton;
use crate::*;

fn names() -> Names {
    Names::default_names()
}

fn d(s: &str, level: &str) -> String {
    defang(s, Level::parse(level).unwrap(), &names()).into_owned()
}

fn u(s: &str, level: &str) -> String {
    undefang(s, Level::parse(level).unwrap(), &names()).into_owned()
}

const LEVELS: [&str; 3] = ["reserved", "markup", "xml"];

#[test]
fn escaping_the_escape() {
    // An opener followed by `\` is escaped only when its reading past the backslash is dangerous.
    for (raw, want) in [
        ("<\\", "<\\"),
        ("<\\\\/retrieved_content>", "<\\\\\\/retrieved_content>"),
        ("&lt;\\x", "&lt;\\x"),
        ("re.compile(r'<\\w+')", "re.compile(r'<\\w+')"),
        ("\u{ab}\\- option \u{bb}", "\u{ab}\\- option \u{bb}"),
        ("[\\INST]", "[\\\\INST]"),
        ("[INST]", "[\\INST]"),
        ("[/INST]", "[\\/INST]"),
        ("[ inst ]", "[\\ inst ]"),
        ("[\\d]+", "[\\d]+"),
        ("<a\\b", "<a\\b"),
    ] {
        assert_eq!(d(raw, "reserved"), want, "{raw:?}");
        assert_eq!(u(want, "reserved"), raw, "{want:?}");
    }
}

#[test]
fn injective_on_colliding_forms() {
    let forms = [
        "</retrieved_content>",
        "<\\/retrieved_content>",
        "<\\\\/retrieved_content>",
        "<\\\\\\/retrieved_content>",
    ];
    let outs: Vec<String> = forms.iter().map(|f| d(f, "reserved")).collect();
    for (i, o) in outs.iter().enumerate() {
        for o2 in &outs[i + 1..] {
            assert_ne!(o, o2);
        }
        assert_eq!(u(o, "reserved"), forms[i]);
    }
}

#[test]
fn chat_tokens_at_every_level() {
    for token in [
        "<|im_end|>",
        "<|im_start|>system",
        "<|start_header_id|>system<|end_header_id|>",
        "<\u{ff5c}end\u{2581}of\u{2581}sentence\u{ff5c}><\u{ff5c}User\u{ff5c}>",
        "\u{ff1c}|im_end|\u{ff1e}",
        "&lt;|im_end|&gt;",
        "</s><s>[INST] <<SYS>>",
        "<</SYS>>",
        "<start_of_turn>user",
        "</think>",
        "<eos>",
        "[SYSTEM_PROMPT]",
        "[AVAILABLE_TOOLS]",
        "<system-reminder>",
        "</function_results>",
    ] {
        for level in LEVELS {
            let out = d(token, level);
            assert_ne!(out, token, "{token:?} {level}");
            assert_eq!(u(&out, level), token, "{token:?} {level}");
        }
    }
}

#[test]
fn benign_untouched_at_reserved() {
    for benign in [
        "<div class='x'>hello</div>",
        "if a < b && c > d: pass",
        "x <- c(1, 2)",
        "I <3 this",
        "<span>s</span><strong>t</strong><script>1</script><section></section>",
        "<sys.path> and <system_info> and <start>",
        "<em>e</em><e>x</e><ex>y</ex><exter>z</exter>",
        "regex [\\d]+ and [\\w\\s]",
        "&amp; &lt; 3 &#60; 4",
        "<retrieve> <content> <retrieved>",
        "\u{645}\u{631}\u{62d}\u{628}\u{627} \u{200c} \u{641}\u{627}\u{631}\u{633}\u{6cc}",
        "\u{1f469}\u{200d}\u{1f4bb} emoji",
        "<!-- comment --> <?php echo 1; ?> <![CDATA[x]]>",
    ] {
        assert_eq!(d(benign, "reserved"), benign);
    }
}

#[test]
fn markup_and_xml_levels() {
    let text = "<p>a</p><!-- c --><?pi?><![CDATA[x]]>< b>";
    assert_eq!(
        d(text, "markup"),
        "<\\p>a<\\/p><\\!-- c --><\\?pi?><\\![CDATA[x]]><\\ b>"
    );
    assert_eq!(d("a < 3 and <= 4", "markup"), "a < 3 and <= 4");
    let out = d("a & b < 3 > d\r\n<x> < y", "xml");
    assert_eq!(out, "a &amp; b &lt; 3 &gt; d&#13;\n&lt;\\x&gt; &lt;\\ y");
    assert_eq!(u(&out, "xml"), "a & b < 3 > d\r\n<x> < y");
}

#[test]
fn configurable_reserved_names() {
    let names = Names::new(&["memory", "retrieved_content"], true, true).unwrap();
    let out = defang(
        "</memory> and </m\u{435}mory> and </retrieved_content>",
        Level::Reserved,
        &names,
    );
    assert_eq!(out.matches("<\\/").count(), 3);
    assert_eq!(d("</memory>", "reserved"), "</memory>");
    assert!(Names::new(&["\u{200b}"], true, true).is_err());
}

#[test]
fn skeleton_folds_the_tricks() {
    for disguise in [
        "RETRIEVED-CONTENT",
        "r\u{435}trieved content",
        "retrieved\u{200b}_content",
        "\u{1d42b}etrieved_c0ntent",
    ] {
        assert_eq!(skeleton(disguise), "retrievedcontent", "{disguise:?}");
    }
}

#[test]
fn padding_fails_closed() {
    let padded = format!("<{}/retrieved_content>", "\u{200b}".repeat(500));
    assert!(d(&padded, "reserved").starts_with("<\\"));
    let long_name = format!("</r{}etrieved_content>", "\u{200b}".repeat(500));
    assert!(d(&long_name, "reserved").starts_with("<\\"));
}

#[test]
fn readings() {
    let n = names();
    let mut sc = Scratch::default();
    let s = "</ns:retrieved_content>";
    let r = read_after(s, 1, &n, &mut sc);
    assert_eq!(
        (r.kind, r.name, r.slash),
        (Kind::Reserved, "retrievedcontent", true)
    );
    let s = "<think >x";
    let r = read_after(s, 1, &n, &mut sc);
    assert_eq!((r.kind, r.name, r.end), (Kind::Token, "think", 8));
    let s = "<|im_end|>";
    assert_eq!(read_after(s, 1, &n, &mut sc).kind, Kind::Bar);
    let s = "&#38;lt;/external_content>";
    let (a, e) = opener::Openers::new(s, Family::Angle).next().unwrap();
    assert_eq!((a, e), (0, 8));
    assert_eq!(read_after(s, e, &n, &mut sc).kind, Kind::Reserved);
    let s = "[ INST ]";
    let r = read_bracket(s, 1, &n, &mut sc);
    assert_eq!((r.kind, r.name, r.end), (Kind::Token, "inst", 8));
    let s = "<div>";
    assert!(read_after(s, 1, &n, &mut sc).is_none());
}

#[test]
fn body_context() {
    // At the end of a body the reader sees "\n<": a name cut by the end is not padding.
    let n = names();
    for level in [Level::Reserved, Level::Markup, Level::Xml] {
        let body = "x </retrieved_content";
        let out = defang_body(body, level, &n);
        assert_eq!(undefang(&out, level, &n), body);
    }
    assert_eq!(defang_body("a <b", Level::Xml, &n), "a &lt;\\b");
}

#[test]
fn openers_in_text_order() {
    let n = names();
    let s = "é[INST] </retrieved_content> <\\x";
    let got: Vec<(usize, usize, Kind)> = openers(s, &n)
        .iter()
        .map(|o| (o.start_cp, o.opener_end_cp, o.kind))
        .collect();
    assert_eq!(
        got,
        vec![
            (1, 2, Kind::Token),
            (8, 9, Kind::Reserved),
            (29, 30, Kind::None)
        ]
    );
}

#[test]
fn undo_uses_the_defangs_tokenization() {
    // `&ltcc;` (U+2AA6) is an opener of its own, `&ltcir;` a reference to another character:
    // defang and undefang both tokenize as OPENER_RE.finditer does, so the round trip holds.
    assert_eq!(d("&ltcc;\\", "reserved"), "&ltcc;\\");
    assert_eq!(u("&ltcc;\\", "reserved"), "&ltcc;\\");
    for s in ["&ltcc;\\", "&ltcir;\\x", "&ltquest;\\", "&lt\\cc;"] {
        assert_eq!(u(&d(s, "markup"), "markup"), s);
    }
}

#[test]
fn opener_letters_end_a_reading() {
    // U+1438 CANADIAN SYLLABICS PA is a letter and a '<' look-alike: it ends the reading
    // (and a namespace prefix) like any opener; it is read on its own.
    let n = names();
    let mut sc = Scratch::default();
    let s = "<\u{1438}:retrieved_content";
    assert!(read_after(s, 1, &n, &mut sc).is_none());
    assert_eq!(read_after(s, 4, &n, &mut sc).kind, Kind::Reserved); // byte 4: the colon
    let s = "<a\u{1438}b:retrieved_content";
    assert!(read_after(s, 1, &n, &mut sc).is_none());
}

#[test]
fn body_context_round_trip() {
    // The last bracket reading of a body reaches its skip bound through the context's "\n".
    let n = names();
    for level in [Level::Reserved, Level::Markup, Level::Xml] {
        for body in [
            "<[TOO                               ",
            "x </retrieved_content",
            "<[INST",
        ] {
            let out = defang_body(body, level, &n);
            assert_eq!(
                undefang_body(&out, level, &n),
                body,
                "{body:?} at {level:?}"
            );
        }
    }
}

#[test]
fn derived_shapes_and_stand_ins() {
    // The answers of the Python reference (tests/eye/test_eye_shapes.py, corpus/symbol_for_letter.json...).
    for (raw, want) in [
        ("<\u{4e28}im_end\u{4e28}>", "<\\\u{4e28}im_end\u{4e28}>"),
        (
            "[\u{4e28}endofturn\u{4e28}]",
            "[\\\u{4e28}endofturn\u{4e28}]",
        ),
        ("\u{3014}INST\u{3015}", "\u{3014}\\INST\u{3015}"),
        ("[INST\u{3015}", "[\\INST\u{3015}"),
        (
            "\u{300c}\u{8a2d}\u{5b9a}\u{300d}\u{ff08}INST\u{ff09}",
            "\u{300c}\u{8a2d}\u{5b9a}\u{300d}\u{ff08}INST\u{ff09}",
        ),
        (
            "\u{22b2}/retrieved_content\u{22b3}",
            "\u{22b2}\\/retrieved_content\u{22b3}",
        ),
        ("<think\u{22b3}", "<\\think\u{22b3}"),
        (
            "</retrieved\u{4e00}content>",
            "<\\/retrieved\u{4e00}content>",
        ),
        (
            "</retrieved\u{fe31}content>",
            "<\\/retrieved\u{fe31}content>",
        ),
        (
            "<\u{300c}/retrieved_content>",
            "<\\\u{300c}/retrieved_content>",
        ),
        ("<SPECIAL_\u{661}\u{662}>", "<\\SPECIAL_\u{661}\u{662}>"),
        ("</retrieved_c\u{b0}ntent>", "<\\/retrieved_c\u{b0}ntent>"),
        ("</\u{ae}etrieved_content>", "<\\/\u{ae}etrieved_content>"),
        ("</retrieved_c&deg;ntent>", "<\\/retrieved_c&deg;ntent>"),
        (
            "</r\u{20ac}tri\u{20ac}ved_content>",
            "</r\u{20ac}tri\u{20ac}ved_content>",
        ),
        ("<thi\u{2229}k>", "<thi\u{2229}k>"),
    ] {
        assert_eq!(d(raw, "reserved"), want, "{raw:?}");
        assert_eq!(u(want, "reserved"), raw, "{want:?}");
    }
}

#[test]
fn guillemet_quotation_and_the_empty_bar() {
    // The answers of the Python reference (tests/eye/test_quotation.py has the reasons).
    for (raw, want) in [
        (
            "\u{0411}\u{0423}\u{041a}\u{0412}\u{0410} \u{ab}S\u{bb} \u{0421}",
            "\u{0411}\u{0423}\u{041a}\u{0412}\u{0410} \u{ab}S\u{bb} \u{0421}",
        ),
        (
            "le sigle \u{ab} PR \u{bb} signifie",
            "le sigle \u{ab} PR \u{bb} signifie",
        ),
        (
            "l'attribut \u{ab}\\ s\\ \u{bb}",
            "l'attribut \u{ab}\\ s\\ \u{bb}",
        ),
        ("\u{2039}s\u{203a}", "\u{2039}s\u{203a}"),
        ("(\u{ab}|\u{bb})", "(\u{ab}|\u{bb})"),
        (
            "\u{bb}http\u{ab} | \u{bb}ftp\u{ab}",
            "\u{bb}http\u{ab} | \u{bb}ftp\u{ab}",
        ),
        ("a <|> b", "a <|> b"),
        (
            "\u{ab}/retrieved_content\u{bb}",
            "\u{ab}\\/retrieved_content\u{bb}",
        ),
        ("\u{ab}|im_end|\u{bb}", "\u{ab}\\|im_end|\u{bb}"),
        ("\u{ab}s\u{bb} <s>", "\u{ab}s\u{bb} <\\s>"),
        ("\u{ab}SYS\u{bb}", "\u{ab}\\SYS\u{bb}"),
        ("\u{ab}start_of_turn\u{bb}", "\u{ab}\\start_of_turn\u{bb}"),
        ("\u{ab}TOOLCALL\u{bb}", "\u{ab}\\TOOLCALL\u{bb}"),
        ("\u{ab}s\u{200b}\u{bb}", "\u{ab}\\s\u{200b}\u{bb}"),
        ("&laquo;s&raquo;", "&laquo;\\s&raquo;"),
        ("\u{ab}s>", "\u{ab}\\s>"),
        ("<s\u{bb}", "<\\s\u{bb}"),
        ("<||>", "<\\||>"),
    ] {
        for level in LEVELS {
            let out = d(raw, level);
            assert_eq!(u(&out, level), raw, "{raw:?} at {level}");
        }
        assert_eq!(d(raw, "reserved"), want, "{raw:?}");
    }
    let n = names();
    let mut sc = Scratch::default();
    let s = "\u{ab}s\u{bb}";
    assert_eq!(read_after(s, 2, &n, &mut sc).kind, Kind::None);
    assert!(reader::quoted_word(s, 2, s.len()));
    assert!(!reader::quoted_word("<s\u{bb}", 1, 4));
}

#[test]
fn code_points_as_chars_count_them() {
    // Every slice of a text mixing one- to four-byte characters at every alignment, against
    // `chars().count()`; a control that counts bit 7 alone (every non-ASCII byte) must differ.
    let s =
        "a\u{e9}b\u{20ac}c\u{1f600}de\u{7ff}\u{800}\u{ffff}\u{10000}\u{10ffff}fghijklmno\u{80}p";
    let text: String = (0..5).map(|_| s).collect();
    let bounds: Vec<usize> = (0..=text.len())
        .filter(|&i| text.is_char_boundary(i))
        .collect();
    for &a in &bounds {
        for &b in bounds.iter().filter(|&&b| b >= a) {
            assert_eq!(
                crate::code_points(&text.as_bytes()[a..b]),
                text[a..b].chars().count(),
                "{a}..{b}"
            );
        }
    }
    let high_bit = text.bytes().filter(|&c| c & 0x80 == 0).count();
    assert_ne!(high_bit, crate::code_points(text.as_bytes()));
}

/// The character boundaries of `s`, its end included.
fn boundaries(s: &str) -> Vec<usize> {
    (0..=s.len()).filter(|&i| s.is_char_boundary(i)).collect()
}

/// Where `off` lies by the table of line starts (`types.LineIndex.locate`), its byte clamped.
fn spot_by_table(s: &str, starts: &[usize], off: usize) -> crate::Spot {
    let line = starts.partition_point(|&x| x <= off);
    let byte = s.char_indices().nth(off).map_or(s.len(), |(i, _)| i);
    crate::Spot {
        line,
        column: off - starts[line - 1] + 1,
        byte,
    }
}

#[test]
fn the_line_walker_agrees_with_the_table_of_line_starts() {
    // Every slice of the text below, and in each every pair of offsets (the second past the end
    // too) taken in order by one walker, with a peek at every later offset from the first.
    let base = "a\n\u{e9}\n\n\u{1f600}\nxyz\u{20ac}abcdefghij\n\u{7ff}\u{10ffff}\n\u{28a}z";
    let long: String = (0..2).map(|_| base).collect();
    let mut checked = 0;
    for (k, &a) in boundaries(&long).iter().enumerate() {
        let s = &long[a..];
        let (starts, n) = crate::line_starts(s.as_bytes());
        let step = if k % 3 == 0 { 1 } else { 5 };
        for first in (0..=n + 2).step_by(step) {
            let mut w = crate::LineWalker::new(s.as_bytes());
            assert_eq!(
                w.to(first),
                spot_by_table(s, &starts, first),
                "{s:?} {first}"
            );
            // A walker of byte offsets alone finds the same bytes.
            let mut p = crate::LineWalker::positions(s.as_bytes());
            assert_eq!(p.to(first).byte, w.peek(first).byte, "{s:?} {first}");
            assert_eq!(p.to(first).line, 1);
            for second in first..=n + 2 {
                assert_eq!(
                    w.peek(second),
                    spot_by_table(s, &starts, second),
                    "{s:?} {first} peek {second}"
                );
                let mut v = w;
                assert_eq!(
                    v.to(second),
                    spot_by_table(s, &starts, second),
                    "{s:?} {first} {second}"
                );
                checked += 1;
            }
        }
    }
    assert!(checked > 10_000, "{checked}");
}

#[test]
fn line_starts_as_a_byte_loop_finds_them() {
    // Every slice of a text with newlines and multi-byte characters at every position of an
    // eight-byte word, and bytes one bit away from `\n` (`\x0b`, `\x08`, `*`, `\x8a` in `\u{28a}`).
    let base = "a\n\u{e9}\n\n\u{1f600}\nx\u{b}y\u{8}*\u{20ac}\n\n\n\nabcdefgh\n\u{7ff}\u{10ffff}\n\u{28a}z";
    let long: String = (0..4).map(|_| base).collect();
    let bounds = boundaries(&long);
    let mut checked = 0;
    for &a in &bounds {
        for &b in bounds.iter().filter(|&&b| b >= a) {
            let s = &long[a..b];
            let mut want = vec![0usize];
            let mut n = 0;
            for c in s.chars() {
                n += 1;
                if c == '\n' {
                    want.push(n);
                }
            }
            assert_eq!(crate::line_starts(s.as_bytes()), (want, n), "{s:?}");
            checked += 1;
        }
    }
    assert!(checked > 5_000);
}

#[test]
fn letters_standing_in_up_to_a_longer_names_separator_are_not_the_shorter_name() {
    // `R` and 16 letters with no reading spell `retrieved_content` whole by the letter stand-in
    // rule; with 17 the last takes the separator before the rest of `retrieved_content_hygiene`,
    // which is no whole spelling (`reader.Names.reserved_match`; found by the compose fuzz harness,
    // where the Python reader had read it as the shorter name).
    let n = names();
    let mut sc = Scratch::default();
    for (k, want) in [(16, Kind::Reserved), (17, Kind::None), (18, Kind::None)] {
        for tail in ["", "\n<", " ", ">"] {
            let s = format!("<R{}{tail}", "\u{416}".repeat(k));
            let r = read_after(&s, 1, &n, &mut sc);
            assert_eq!(r.kind, want, "{k} {tail:?}");
        }
    }
}

#[test]
fn the_canonical_check_without_the_undo_agrees_with_both_steps() {
    // A body the defang leaves alone is canonical and its own undo; every other body takes the undo
    // and the defang (the slow form, written out here). Each case needs one pass or the text escape,
    // so a `defang_body_changes` that forgets that pass takes the fast path on it and fails.
    let n = names();
    let cases = [
        ("plain words", &["reserved", "markup", "xml"][..], false),
        ("a </retrieved_content> b", &LEVELS[..], true), // the angle pass
        ("say [INST] now", &LEVELS[..], true),           // the bracket pass
        ("x >>TITLE<< y", &LEVELS[..], true),            // the exact pass
        ("a <b>", &["markup", "xml"][..], true),         // markup
        ("a & b", &["xml"][..], true),                   // the text escape
        ("tail <", &["reserved", "markup"][..], false),  // a reading into the context, none
        ("<\\/retrieved_content> b", &LEVELS[..], true), // escaped: canonical, but the defang changes it
        ("r'<\\w+' [\\d]", &["reserved"][..], false),
    ];
    for (s, levels, changes) in cases {
        for level in levels {
            let lvl = Level::parse(level).unwrap();
            let plain = undefang_body(s, lvl, &n);
            let slow = (plain.clone(), defang_body(&plain, lvl, &n) == s);
            assert_eq!(canonical_body(s, lvl, &n), slow, "{s:?} at {level}");
            let really = defang_body(s, lvl, &n) != s;
            assert_eq!(
                defang::defang_body_changes(s, lvl, &n),
                really,
                "{s:?} at {level}"
            );
            assert_eq!(
                really, changes,
                "the case does not test what it says: {s:?} at {level}"
            );
        }
    }
}

#[test]
fn the_canonical_check_pass_by_pass_agrees_with_the_round_trip() {
    // `canonical_body` undoes a body one pass at a time, each checked against its defang pass; it
    // must give what the undo and the defang of the whole body give, on every text of up to three
    // fragments and on its defang (canonical: backslashes where a defang puts them) at every level.
    // Every canonical one must pass the checks pass by pass (the round trip is only the fallback).
    // Control: a check that trusted the undo (canonical whenever the defang changes the body) is
    // wrong on many of them, so these texts would catch a check that accepted them all.
    let n = names();
    let frags = [
        "<",
        "\\",
        "/retrieved_content>",
        "retrieved_content",
        "[INST]",
        "[",
        "INST]",
        ">>TITLE<<",
        ">",
        "&lt;",
        "&",
        "a",
        "\n",
        "<b>",
        "<|",
        "im_end|>",
        "\u{ff1c}",
    ];
    let mut texts = vec![String::new()];
    for _ in 0..3 {
        let more: Vec<String> = texts
            .iter()
            .flat_map(|t| frags.iter().map(move |f| format!("{t}{f}")))
            .collect();
        texts.extend(more);
    }
    texts.sort();
    texts.dedup();
    let (mut by_passes, mut trusting_wrong) = (0, 0);
    for level in LEVELS {
        let lvl = Level::parse(level).unwrap();
        for text in &texts {
            let canonical = defang_body(text, lvl, &n).into_owned();
            for s in [text.as_str(), canonical.as_str()] {
                let plain = undefang_body(s, lvl, &n);
                let same = defang_body(&plain, lvl, &n) == s;
                assert_eq!(
                    canonical_body(s, lvl, &n),
                    (plain.clone(), same),
                    "{s:?} at {level}"
                );
                if !defang::defang_body_changes(s, lvl, &n) {
                    continue;
                }
                let passes = defang::canonical_by_passes(s, lvl, &n);
                assert_eq!(passes.is_some(), same, "{s:?} at {level}");
                by_passes += usize::from(passes.is_some());
                trusting_wrong += usize::from(!same);
            }
        }
    }
    assert!(
        by_passes > 5_000 && trusting_wrong > 1_000,
        "{by_passes} {trusting_wrong}"
    );
}

/// The text escape as the Python reference writes it (`xml_escape_text`): one byte at a time.
fn xml_escape_by_bytes(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\r' => out.push_str("&#13;"),
            _ => out.push(c),
        }
    }
    out
}

#[test]
fn the_xml_escape_by_runs_is_the_escape_by_bytes() {
    // Every text of up to five characters over the escaped bytes, a neighbour of each and a
    // non-ASCII letter: the memchr form (`xml_escape`, `xml_escaped_equals`) against the byte loop.
    let alphabet = ['&', '<', '>', '\r', 'a', ';', '\u{e9}'];
    let mut texts = vec![String::new()];
    let mut checked = 0;
    for _ in 0..5 {
        let mut next = Vec::new();
        for t in &texts {
            for &c in &alphabet {
                let mut u = t.clone();
                u.push(c);
                next.push(u);
            }
        }
        for t in &next {
            let want = xml_escape_by_bytes(t);
            assert_eq!(xml_escape(t), want, "{t:?}");
            assert!(crate::defang::xml_escaped_equals(t, &want), "{t:?}");
            assert_eq!(xml_unescape(&want), t.as_str(), "{t:?}");
            // The escaped text read back: `t` itself (unescaped by its own rule, `&` not followed
            // by a reference is text) and its escape.
            for escaped in [t.as_str(), want.as_str()] {
                let plain = xml_unescape(escaped);
                assert!(xml_unescaped_equals(escaped, &plain), "{escaped:?}");
                // Controls: the plain text one byte short, one longer, or with a byte changed.
                assert!(
                    !xml_unescaped_equals(escaped, &format!("{plain};")),
                    "{escaped:?}"
                );
                if let Some(c) = plain.chars().last() {
                    let short = &plain[..plain.len() - c.len_utf8()];
                    assert!(!xml_unescaped_equals(escaped, short), "{escaped:?}");
                    let swapped = format!("{short}{}", if c == '<' { '>' } else { '<' });
                    assert!(!xml_unescaped_equals(escaped, &swapped), "{escaped:?}");
                }
            }
            // Controls: the escape with any one escaped byte left raw, or one byte longer, is refused.
            for (i, c) in t.char_indices().filter(|(_, c)| "&<>\r".contains(*c)) {
                let left = format!(
                    "{}{c}{}",
                    xml_escape_by_bytes(&t[..i]),
                    xml_escape_by_bytes(&t[i + 1..])
                );
                assert!(
                    !crate::defang::xml_escaped_equals(t, &left),
                    "{t:?} vs {left:?}"
                );
                // The same length, another reference (`&lt;` for `&gt;`): only the reference differs.
                let other = format!(
                    "{}&xx;{}",
                    xml_escape_by_bytes(&t[..i]),
                    xml_escape_by_bytes(&t[i + 1..])
                );
                if other.len() == want.len() {
                    assert!(
                        !crate::defang::xml_escaped_equals(t, &other),
                        "{t:?} vs {other:?}"
                    );
                }
            }
            assert!(
                !crate::defang::xml_escaped_equals(t, &format!("{want}a")),
                "{t:?}"
            );
            checked += 1;
        }
        texts = next;
    }
    assert!(checked > 16_000, "{checked}");
}
