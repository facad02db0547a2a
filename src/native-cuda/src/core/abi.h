// Internal code includes the public header only through this file. The library is compiled with
// -fvisibility=hidden; wrapping the ABI declarations in visibility(default) is what exports exactly
// the symmem_* functions and nothing else (the linker version script double-checks it).
#pragma once
#pragma GCC visibility push(default)
#include "symmem.h"
#pragma GCC visibility pop
