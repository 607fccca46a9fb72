// Not linalg's syntax: a comment (dimensions = [0, x]), a string, a dictionary.
func.func private @g() attributes {note = "dimensions = foo", dimensions = [0, x]}
func.func @f(%a: tensor<4x8xf32>, %acc: tensor<4xf32>) -> tensor<4xf32> {
  %r = linalg.reduce ins(%a : tensor<4x8xf32>) outs(%acc : tensor<4xf32>) dimensions = [1,
                                                                                       x]
    (%in: f32, %out: f32) {
      %s = arith.addf %in, %out : f32
      linalg.yield %s : f32
    }
  return %r : tensor<4xf32>
}
