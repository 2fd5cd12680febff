/// One libyaml parser event, copied out of C memory into Swift values.
///
/// Stream start and end are not passed on; everything else the tree builder needs is.
enum ParserEvent {
    case documentStart(start: Mark)
    case documentEnd
    case alias(start: Mark, end: Mark)
    case scalar(String, ScalarStyle, tag: String?, hasAnchor: Bool, start: Mark, end: Mark)
    case collectionStart(isMapping: Bool, isFlow: Bool, tag: String?, hasAnchor: Bool, start: Mark)
    case collectionEnd(end: Mark)
}
