internal import CYAML

/// Drives libyaml's event parser over one buffer.
///
/// libyaml keeps pointers to the parser and to the input for the parser's whole life, so the
/// parser lives on the heap and the whole parse happens inside one buffer scope. Debian's libyaml
/// keeps its assertions and aborts on an empty buffer, so an empty buffer is never passed.
enum LibYAMLParser {
    /// Feeds events to `handle` until the stream ends, `handle` returns `false`, or libyaml fails;
    /// returns the failure, if any.
    static func parse(_ bytes: [UInt8], _ handle: (ParserEvent) -> Bool) -> LibYAMLError? {
        guard !bytes.isEmpty else { return nil }
        let parser = UnsafeMutablePointer<yaml_parser_t>.allocate(capacity: 1)
        defer { parser.deallocate() }
        return bytes.withUnsafeBufferPointer { buffer -> LibYAMLError? in
            guard yaml_parser_initialize(parser) != 0 else {
                return LibYAMLError(kind: .memory, problem: "out of memory", problemMark: Mark(line: 1, column: 1),
                                    context: nil, contextMark: nil, problemOffset: 0)
            }
            defer { yaml_parser_delete(parser) }
            yaml_parser_set_input_string(parser, buffer.baseAddress, buffer.count)
            yaml_parser_set_encoding(parser, YAML_UTF8_ENCODING)
            var event = yaml_event_t()
            while true {
                guard yaml_parser_parse(parser, &event) != 0 else { return error(of: parser) }
                let type = event.type
                let converted = convert(event)
                yaml_event_delete(&event)
                if type == YAML_STREAM_END_EVENT { return nil }
                if let converted, !handle(converted) { return nil }
            }
        }
    }

    private static func mark(_ m: yaml_mark_t) -> Mark {
        Mark(line: Int(m.line) + 1, column: Int(m.column) + 1)
    }

    private static func string(_ p: UnsafeMutablePointer<yaml_char_t>?) -> String? {
        p.map { String(cString: $0) }
    }

    /// Turns libyaml's resolved tag back into the form written: `!!str` for the YAML namespace.
    private static func writtenTag(_ p: UnsafeMutablePointer<yaml_char_t>?) -> String? {
        guard let tag = string(p) else { return nil }
        let core = "tag:yaml.org,2002:"
        return tag.hasPrefix(core) ? "!!" + tag.dropFirst(core.count) : tag
    }

    private static func convert(_ e: yaml_event_t) -> ParserEvent? {
        let start = mark(e.start_mark), end = mark(e.end_mark)
        switch e.type {
        case YAML_DOCUMENT_START_EVENT:
            return .documentStart(start: start)
        case YAML_DOCUMENT_END_EVENT:
            return .documentEnd
        case YAML_ALIAS_EVENT:
            return .alias(start: start, end: end)
        case YAML_SCALAR_EVENT:
            let s = e.data.scalar
            let text: String
            if let value = s.value, s.length > 0 {
                text = String(decoding: UnsafeBufferPointer(start: value, count: Int(s.length)), as: UTF8.self)
            } else {
                text = ""
            }
            let style: ScalarStyle
            switch s.style {
            case YAML_SINGLE_QUOTED_SCALAR_STYLE: style = .singleQuoted
            case YAML_DOUBLE_QUOTED_SCALAR_STYLE: style = .doubleQuoted
            case YAML_LITERAL_SCALAR_STYLE: style = .literal
            case YAML_FOLDED_SCALAR_STYLE: style = .folded
            default: style = .plain
            }
            return .scalar(text, style, tag: writtenTag(s.tag), hasAnchor: s.anchor != nil, start: start, end: end)
        case YAML_SEQUENCE_START_EVENT:
            let s = e.data.sequence_start
            return .collectionStart(isMapping: false, isFlow: s.style == YAML_FLOW_SEQUENCE_STYLE,
                                    tag: writtenTag(s.tag), hasAnchor: s.anchor != nil, start: start)
        case YAML_MAPPING_START_EVENT:
            let m = e.data.mapping_start
            return .collectionStart(isMapping: true, isFlow: m.style == YAML_FLOW_MAPPING_STYLE,
                                    tag: writtenTag(m.tag), hasAnchor: m.anchor != nil, start: start)
        case YAML_SEQUENCE_END_EVENT, YAML_MAPPING_END_EVENT:
            return .collectionEnd(end: end)
        default:
            return nil
        }
    }

    private static func error(of parser: UnsafeMutablePointer<yaml_parser_t>) -> LibYAMLError {
        let p = parser.pointee
        let kind: LibYAMLError.Kind
        switch p.error {
        case YAML_READER_ERROR: kind = .reader
        case YAML_SCANNER_ERROR: kind = .scanner
        case YAML_PARSER_ERROR: kind = .parser
        case YAML_MEMORY_ERROR: kind = .memory
        default: kind = .other
        }
        let context = p.context.map { String(cString: $0) }
        return LibYAMLError(
            kind: kind,
            problem: p.problem.map { String(cString: $0) } ?? (kind == .memory ? "out of memory" : "invalid YAML"),
            problemMark: mark(p.problem_mark),
            context: context,
            contextMark: context == nil ? nil : mark(p.context_mark),
            problemOffset: Int(p.problem_offset))
    }
}
