/**
 * Typed plugin definitions (issue 9): a method's or generator's params are typed FROM its JSON
 * schema, so `run(problem, params, …)` reads `params.numFrequencies` as a number and
 * `params.features` as `"trig" | "positive" | "hyperbolic"` without casts. The schema is the single
 * source of truth — config validation (ajv) checks a config against the same object, and the
 * runner fills defaults before calling `run`, so every property with a `default` is present.
 *
 * `defineMethod` / `defineProblem` only add the types; they return the definition unchanged as the
 * registries' untyped `MethodDefinition` / `ProblemDefinition` (params as `Params`).
 */
import type { SeedKey } from "@randattn/core";
import type {
  Cost,
  GenerateContext,
  MethodDefinition,
  MethodResult,
  Params,
  ParamsSchema,
  ProblemDefinition,
  ProblemInstance,
  ReferenceContext,
  RunContext,
} from "./types.js";
import type { ProblemShape } from "./shape.js";

/** An integer param (JSON schema `type: "integer"`). */
export type IntegerParamSchema = {
  readonly type: "integer";
  readonly minimum?: number;
  readonly maximum?: number;
  readonly default?: number;
  readonly description?: string;
};
/** A real param. */
export type NumberParamSchema = {
  readonly type: "number";
  readonly minimum?: number;
  readonly maximum?: number;
  readonly exclusiveMinimum?: number;
  readonly exclusiveMaximum?: number;
  readonly default?: number;
  readonly description?: string;
};
/** A string param, optionally an enum. */
export type StringParamSchema<E extends string = string> = {
  readonly type: "string";
  readonly enum?: readonly E[];
  readonly default?: E;
  readonly description?: string;
  readonly minLength?: number;
  readonly maxLength?: number;
  /** ECMA regex the value must match (ajv `pattern`). */
  readonly pattern?: string;
};
/** A boolean param. */
export type BooleanParamSchema = {
  readonly type: "boolean";
  readonly default?: boolean;
  readonly description?: string;
};
/** One property of a params schema. */
export type ParamSchema = IntegerParamSchema | NumberParamSchema | StringParamSchema | BooleanParamSchema;

/** A typed params schema: closed object of typed properties. */
export type TypedParamsSchema<P extends Record<string, ParamSchema> = Record<string, ParamSchema>> = {
  readonly type: "object";
  readonly properties: P;
  readonly required?: readonly string[];
  readonly additionalProperties: false;
};

/** The TypeScript type of one param's value. */
export type ParamValueOf<S> = S extends { readonly type: "integer" | "number" }
  ? number
  : S extends { readonly type: "boolean" }
    ? boolean
    : S extends { readonly type: "string"; readonly enum: readonly (infer E)[] }
      ? E
      : S extends { readonly type: "string" }
        ? string
        : never;

/**
 * The params object a `run`/`generate` receives for schema `S`: every property with a default (or
 * listed in `required`) is present, the others optional.
 */
export type ParamsOf<S extends TypedParamsSchema> = {
  readonly [K in keyof S["properties"] as S["properties"][K] extends { readonly default: unknown }
    ? K
    : K extends RequiredOf<S>
      ? K
      : never]: ParamValueOf<S["properties"][K]>;
} & {
  readonly [K in keyof S["properties"] as S["properties"][K] extends { readonly default: unknown }
    ? never
    : K extends RequiredOf<S>
      ? never
      : K]?: ParamValueOf<S["properties"][K]>;
};
type RequiredOf<S extends TypedParamsSchema> = NonNullable<S["required"]> extends readonly (infer R)[] ? R : never;

/** An integer param with bounds and default. */
export function intParam(minimum: number, maximum: number, def: number, description: string): IntegerParamSchema & { default: number } {
  return { type: "integer", minimum, maximum, default: def, description };
}

/** A real param with bounds and default (as {@link intParam}). */
export function numberParam(minimum: number, maximum: number, def: number, description: string): NumberParamSchema & { default: number } {
  return { type: "number", minimum, maximum, default: def, description };
}

/** A string-enum param. */
export function enumParam<const E extends string>(
  values: readonly E[],
  def: NoInfer<E>,
  description: string,
): StringParamSchema<E> & { enum: readonly E[]; default: E } {
  return { type: "string", enum: [...values], default: def, description };
}

/** A boolean param. */
export function boolParam(def: boolean, description: string): BooleanParamSchema & { default: boolean } {
  return { type: "boolean", default: def, description };
}

/**
 * A closed params schema (unknown params are rejected with their path). The `required` names are
 * kept in the type, so a required param without a default is typed as present.
 */
export function paramsSchema<const P extends Record<string, ParamSchema>, const R extends keyof P & string = never>(
  properties: P,
  required?: readonly R[],
): TypedParamsSchema<P> & { readonly required?: readonly R[] } {
  return required
    ? { type: "object", properties, required, additionalProperties: false }
    : { type: "object", properties, additionalProperties: false };
}

/** A method whose `run`/`references` read params typed from `paramsSchema`. */
export interface TypedMethodDefinition<S extends TypedParamsSchema>
  extends Omit<MethodDefinition, "paramsSchema" | "run" | "references" | "estimateCost"> {
  readonly paramsSchema: S;
  /** See `MethodDefinition.estimateCost`. */
  estimateCost(problem: ProblemShape, params: ParamsOf<S>): Cost;
  run(problem: ProblemInstance, params: ParamsOf<S>, context: RunContext, seed: SeedKey): MethodResult;
  references?(problem: ProblemInstance, params: ParamsOf<S>, context?: ReferenceContext): Readonly<Record<string, number | null>>;
}

/** A generator whose `generate` reads params typed from `paramsSchema`. */
export interface TypedProblemDefinition<S extends TypedParamsSchema>
  extends Omit<ProblemDefinition, "paramsSchema" | "generate" | "structuralParams" | "shape"> {
  readonly paramsSchema: S;
  /** See `ProblemDefinition.structuralParams`; checked against the schema's properties. */
  readonly structuralParams: readonly (keyof S["properties"] & string)[];
  /** See `ProblemDefinition.shape`. */
  shape?(params: ParamsOf<S>, context: GenerateContext): ProblemShape;
  generate(params: ParamsOf<S>, context: GenerateContext, seed: SeedKey): ProblemInstance;
}

/**
 * Declares a method with params typed from its schema. The registry calls `run` with params that
 * passed the schema (defaults filled), which is what makes the cast below sound.
 */
export function defineMethod<const S extends TypedParamsSchema>(def: TypedMethodDefinition<S>): MethodDefinition {
  return def as unknown as MethodDefinition;
}

/** Declares a problem generator with params typed from its schema (see {@link defineMethod}). */
export function defineProblem<const S extends TypedParamsSchema>(def: TypedProblemDefinition<S>): ProblemDefinition {
  return def as unknown as ProblemDefinition;
}

/** The untyped schema view, for code that handles every registered schema alike. */
export function asParamsSchema(schema: TypedParamsSchema): ParamsSchema {
  return schema as unknown as ParamsSchema;
}

/** The untyped params view (for tests and tools that build params by hand). */
export type AnyParams = Params;
