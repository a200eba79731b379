#include "engine/text_shape.hpp"
