func.func private @g() attributes {sizes = array< // a comment
    index: 1, 2>}
