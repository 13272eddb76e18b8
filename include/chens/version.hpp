#pragma once

#define CHENS_VERSION_STRING "0.1.0"
