dist.mesh @m shape = [2]
"dist.wait"(%x) : (f32) -> f32
