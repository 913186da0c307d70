// Shared by the kernels of the project: reached from kernels/ through "../common/".
#pragma once
#define FACTOR 2.0f
