"""A GET's query parameters, checked as the API answers them."""

from phoneintel.errors import ApiError


def checked_query(params, serializer_class) -> dict:
    """The validated query; a 422 `validation_error` naming the first parameter that is
    unknown, repeated or not valid."""
    allowed = serializer_class().fields
    for name in params:
        if name not in allowed:
            raise ApiError.validation(
                name, "unknown_parameter", f"Unknown query parameter; use {', '.join(allowed)}."
            )
        if len(params.getlist(name)) > 1:
            raise ApiError.validation(name, "repeated_parameter", "Give this parameter once.")
    query = serializer_class(data=params.dict())
    if not query.is_valid():
        name, [problem, *_] = next(iter(query.errors.items()))
        raise ApiError.validation(name, problem.code, str(problem))
    return query.validated_data
