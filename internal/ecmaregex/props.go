package ecmaregex

import (
	"fmt"
	"strings"
	"unicode"
)

// generalCategories maps the long names and aliases of General_Category
// values (UCD PropertyValueAliases.txt) to their short names, which are
// the keys of unicode.Categories.
var generalCategories = map[string]string{
	"Other": "C", "Control": "Cc", "cntrl": "Cc", "Format": "Cf", "Unassigned": "Cn",
	"Private_Use": "Co", "Surrogate": "Cs", "Letter": "L", "Cased_Letter": "LC",
	"Lowercase_Letter": "Ll", "Modifier_Letter": "Lm", "Other_Letter": "Lo",
	"Titlecase_Letter": "Lt", "Uppercase_Letter": "Lu", "Mark": "M", "Combining_Mark": "M",
	"Spacing_Mark": "Mc", "Enclosing_Mark": "Me", "Nonspacing_Mark": "Mn", "Number": "N",
	"Decimal_Number": "Nd", "digit": "Nd", "Letter_Number": "Nl", "Other_Number": "No",
	"Punctuation": "P", "punct": "P", "Connector_Punctuation": "Pc", "Dash_Punctuation": "Pd",
	"Close_Punctuation": "Pe", "Final_Punctuation": "Pf", "Initial_Punctuation": "Pi",
	"Other_Punctuation": "Po", "Open_Punctuation": "Ps", "Symbol": "S", "Currency_Symbol": "Sc",
	"Modifier_Symbol": "Sk", "Math_Symbol": "Sm", "Other_Symbol": "So", "Separator": "Z",
	"Line_Separator": "Zl", "Paragraph_Separator": "Zp", "Space_Separator": "Zs",
}

// binaryProperties maps the names and aliases of ECMA-262's binary
// Unicode properties (table-binary-unicode-properties) to the name of the
// table in unicode.Properties, or to "" when Go's unicode package has none
// (derived properties, emoji properties). Any, ASCII and Assigned are
// handled apart.
var binaryProperties = map[string]string{
	"ASCII_Hex_Digit": "ASCII_Hex_Digit", "AHex": "ASCII_Hex_Digit",
	"Bidi_Control": "Bidi_Control", "Bidi_C": "Bidi_Control",
	"Dash": "Dash", "Deprecated": "Deprecated", "Dep": "Deprecated",
	"Diacritic": "Diacritic", "Dia": "Diacritic", "Extender": "Extender", "Ext": "Extender",
	"Hex_Digit": "Hex_Digit", "Hex": "Hex_Digit",
	"IDS_Binary_Operator": "IDS_Binary_Operator", "IDSB": "IDS_Binary_Operator",
	"IDS_Trinary_Operator": "IDS_Trinary_Operator", "IDST": "IDS_Trinary_Operator",
	"Ideographic": "Ideographic", "Ideo": "Ideographic",
	"Join_Control": "Join_Control", "Join_C": "Join_Control",
	"Logical_Order_Exception": "Logical_Order_Exception", "LOE": "Logical_Order_Exception",
	"Noncharacter_Code_Point": "Noncharacter_Code_Point", "NChar": "Noncharacter_Code_Point",
	"Pattern_Syntax": "Pattern_Syntax", "Pat_Syn": "Pattern_Syntax",
	"Pattern_White_Space": "Pattern_White_Space", "Pat_WS": "Pattern_White_Space",
	"Quotation_Mark": "Quotation_Mark", "QMark": "Quotation_Mark", "Radical": "Radical",
	"Regional_Indicator": "Regional_Indicator", "RI": "Regional_Indicator",
	"Sentence_Terminal": "Sentence_Terminal", "STerm": "Sentence_Terminal",
	"Soft_Dotted": "Soft_Dotted", "SD": "Soft_Dotted",
	"Terminal_Punctuation": "Terminal_Punctuation", "Term": "Terminal_Punctuation",
	"Unified_Ideograph": "Unified_Ideograph", "UIdeo": "Unified_Ideograph",
	"Variation_Selector": "Variation_Selector", "VS": "Variation_Selector",
	"White_Space": "White_Space", "space": "White_Space",

	"Alphabetic": "", "Alpha": "", "Bidi_Mirrored": "", "Bidi_M": "", "Case_Ignorable": "", "CI": "",
	"Cased": "", "Changes_When_Casefolded": "", "CWCF": "", "Changes_When_Casemapped": "", "CWCM": "",
	"Changes_When_Lowercased": "", "CWL": "", "Changes_When_NFKC_Casefolded": "", "CWKCF": "",
	"Changes_When_Titlecased": "", "CWT": "", "Changes_When_Uppercased": "", "CWU": "",
	"Default_Ignorable_Code_Point": "", "DI": "", "Emoji": "", "Emoji_Component": "", "EComp": "",
	"Emoji_Modifier": "", "EMod": "", "Emoji_Modifier_Base": "", "EBase": "",
	"Emoji_Presentation": "", "EPres": "", "Extended_Pictographic": "", "ExtPict": "",
	"Grapheme_Base": "", "Gr_Base": "", "Grapheme_Extend": "", "Gr_Ext": "", "ID_Continue": "", "IDC": "",
	"ID_Start": "", "IDS": "", "Lowercase": "", "Lower": "", "Math": "", "Uppercase": "", "Upper": "",
	"XID_Continue": "", "XIDC": "", "XID_Start": "", "XIDS": "",
}

// assigned is every code point of a General_Category other than Cn.
var assigned = func() charSet {
	var c charSet
	for name, t := range unicode.Categories {
		if len(name) == 2 && name != "Cn" && name != "LC" {
			c = union(c, fromTable(t))
		}
	}
	return c
}()

// category returns the code points of a General_Category value.
func category(v string) (charSet, bool) {
	if short, ok := generalCategories[v]; ok {
		v = short
	}
	switch v {
	case "Cn":
		return negate(assigned), true
	case "C": // Go's unicode.C leaves out the unassigned code points
		return union(fromTable(unicode.C), negate(assigned)), true
	}
	t, ok := unicode.Categories[v]
	if !ok {
		return nil, false
	}
	return fromTable(t), true
}

// property resolves the body of \p{...} (u flag): a General_Category or
// Script value, or a binary property. It reports an error for a name
// ECMA-262 does not define (a syntax error) and for one it defines but Go's
// Unicode tables lack (Script_Extensions, derived properties such as
// Alphabetic, short script names): such a pattern cannot be matched as
// written, so it is refused rather than read another way.
func property(body string) (charSet, error) {
	name, value, hasValue := strings.Cut(body, "=")
	if hasValue {
		switch name {
		case "General_Category", "gc":
			if c, ok := category(value); ok {
				return c, nil
			}
			return nil, fmt.Errorf("unknown General_Category value %q", value)
		case "Script", "sc":
			if t, ok := unicode.Scripts[value]; ok {
				return fromTable(t), nil
			}
			return nil, &unsupportedError{fmt.Sprintf("script %q (only the long script names Go's unicode tables use are supported)", value)}
		case "Script_Extensions", "scx":
			return nil, &unsupportedError{"Script_Extensions"}
		}
		return nil, fmt.Errorf("unknown Unicode property %q", name)
	}
	if c, ok := category(name); ok {
		return c, nil
	}
	switch name {
	case "Any":
		return anyChar, nil
	case "ASCII":
		return charSet{{0, 0x7F}}, nil
	case "Assigned":
		return assigned, nil
	}
	goName, known := binaryProperties[name]
	switch {
	case !known:
		return nil, fmt.Errorf("unknown Unicode property %q", name)
	case goName != "":
		return fromTable(unicode.Properties[goName]), nil
	}
	return nil, &unsupportedError{fmt.Sprintf("Unicode property %q", name)}
}

// unsupportedError is a construct ECMA-262 may define that this package
// cannot match; unlike a syntax error it does not let the pattern be read
// with the grammar without the u flag.
type unsupportedError struct{ what string }

func (e *unsupportedError) Error() string { return e.what + " is not supported" }
