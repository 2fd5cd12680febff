/// A column of a mapped table as the catalogue describes it (`pg_attribute`, `pg_type`,
/// `pg_attrdef`), read when the store opens: the type values are cast to, and what an insert
/// must fill.
struct PGColumn: Sendable, Hashable {
    /// `format_type`: `integer`, `character varying(20)`, `timestamp(6) without time zone`,
    /// `public.status_kind`.
    var type: String
    /// `pg_type.typcategory`: `S` string, `N` numeric, `B` boolean, `D` date and time, `E` enum,
    /// `U` user-defined (uuid, json, jsonb), `A` array…
    var category: Character
    var notNull = false
    /// `pg_get_expr` of its default, if it has one (a serial column's `nextval(…)` too).
    var defaultSQL: String?
    /// An identity or generated column: the database fills it, an insert must not.
    var filledByDatabase = false

    init(type: String, category: Character, notNull: Bool = false, defaultSQL: String? = nil, filledByDatabase: Bool = false) {
        self.type = type
        self.category = category
        self.notNull = notNull
        self.defaultSQL = defaultSQL
        self.filledByDatabase = filledByDatabase
    }

    var isString: Bool { category == "S" }
    var isInteger: Bool { ["smallint", "integer", "bigint"].contains(type) }
    var isNumeric: Bool { category == "N" }
    var isBoolean: Bool { category == "B" }
    var isJSON: Bool { type == "json" || type == "jsonb" }
    /// `timestamp with time zone`, with or without a precision.
    var isTimestampTZ: Bool { type.hasPrefix("timestamp") && type.hasSuffix("with time zone") }
    /// `timestamp without time zone` (Rails' and Django's `datetime` without `USE_TZ`): Usher
    /// reads and writes it as UTC.
    var isTimestamp: Bool { type.hasPrefix("timestamp") && type.hasSuffix("without time zone") }

    /// Whether an insert may leave the column out: the database fills it, or has a default, or
    /// takes NULL.
    var mayBeLeftOut: Bool { filledByDatabase || defaultSQL != nil || !notNull }

    /// `expr` (text) as a value of this column. Text goes into a string column as it is: an
    /// explicit cast to `varchar(n)` would cut a long value short where the assignment refuses
    /// it (and the store quarantines the message); every other type needs the cast.
    func cast(_ expr: String) -> String { isString ? expr : "(\(expr))::\(type)" }

    /// Two columns whose values can be compared with `=`: both strings, both numbers, or the
    /// same type (uuid with uuid).
    func comparable(with other: PGColumn) -> Bool {
        (isString && other.isString) || (isNumeric && other.isNumeric) || type == other.type
    }

    /// How a type reads in a diagnostic: "integer", "an enum (public.status_kind)".
    var described: String { category == "E" ? "an enum (\(type))" : type }
}
