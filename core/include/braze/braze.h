#pragma once

/// Everything a user of Braze's C++ API needs to define and evaluate fusions.
#include "braze/error.h"
#include "braze/eval/dlpack_interop.h"
#include "braze/eval/expression_evaluator.h"
#include "braze/eval/host_tensor.h"
#include "braze/eval/reference_evaluator.h"
#include "braze/ir/fusion.h"
#include "braze/ir/printer.h"
#include "braze/ir/structural_hash.h"
#include "braze/ops/contraction.h"
#include "braze/ops/elementwise.h"
#include "braze/ops/random.h"
#include "braze/ops/reduction.h"
#include "braze/ops/scan.h"
#include "braze/ops/shape.h"
