/// <reference lib="dom" />
import { useEffect, useState } from "preact/hooks";
import type { ActionForm, AmountForm, ExchangeForm, SplitForm, TextForm } from "../../../protocol/action-forms.ts";
import type { Action, GameTable, TurnBinding } from "../tables/types.ts";

/**
 * The legal forms of an open decision as controls: a button per fixed action (keys 1–9), a slider with a
 * number box for an amount, a message box, steppers for a split, a give/get builder for an exchange. Only
 * what the server listed can be built here; the server still judges what arrives.
 */

export function label(type: string, table: GameTable): string {
  return table.labels?.[type] ?? (type.charAt(0).toUpperCase() + type.slice(1)).replaceAll("-", " ");
}

/** A fixed action's words: its type, and any other fields (tic-tac-toe's cell). */
function fixedLabel(action: Action, table: GameTable): string {
  const extra = Object.entries(action).filter(([k]) => k !== "type").map(([, v]) => String(v));
  return [label(action.type, table), ...extra].join(" ");
}

export function ActionBar(props: { turn: TurnBinding; table: GameTable; obs: unknown }) {
  const { turn, table } = props;
  const forms = turn.legal.filter((form) => !table.ownsForm?.(form));
  const fixed = forms.filter((f): f is Extract<ActionForm, { kind: "fixed" }> => f.kind === "fixed");

  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      const target = event.target as HTMLElement | null;
      if (target && /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName)) return;
      if (event.ctrlKey || event.metaKey || event.altKey) return;
      const index = Number(event.key) - 1;
      if (Number.isInteger(index) && index >= 0 && index < fixed.length) {
        event.preventDefault();
        (document.querySelector(`[data-key="${index + 1}"]`) as HTMLButtonElement | null)?.click();
      }
    };
    addEventListener("keydown", onKey);
    return () => removeEventListener("keydown", onKey);
  }, [fixed.length]);

  if (forms.length === 0) return null;
  return (
    <div class="action-bar" role="group" aria-label="Your move">
      {fixed.length > 0 && (
        <div class="fixed-actions">
          {fixed.map((form, i) => (
            <button
              type="button"
              class={`action action-${form.action.type}`}
              data-key={i < 9 ? String(i + 1) : undefined}
              // The action travels in the button's value, as a form's submit button carries its own.
              value={JSON.stringify(form.action)}
              onClick={(e) => turn.submit(JSON.parse((e.currentTarget as HTMLButtonElement).value))}
            >
              {fixedLabel(form.action as Action, table)}
              {i < 9 && <kbd>{i + 1}</kbd>}
            </button>
          ))}
        </div>
      )}
      {forms.map((form, i) => {
        switch (form.kind) {
          case "amount":
            return <AmountControl key={`a${i}`} form={form} turn={turn} table={table} obs={props.obs} />;
          case "text":
            return <TextControl key={`t${i}`} form={form} turn={turn} table={table} />;
          case "split":
            return <SplitControl key={`s${i}`} form={form} turn={turn} table={table} />;
          case "exchange":
            return <ExchangeControl key={`e${i}`} form={form} turn={turn} table={table} />;
          default:
            return null;
        }
      })}
    </div>
  );
}

/** Within the legal range, to whole units or cents; the range's own ends stay exact (a donor's 0.7155 is all of it). */
function clamp(n: number, form: AmountForm): number {
  const rounded = form.integer ? Math.round(n) : Math.round(n * 100) / 100;
  return Math.min(form.max, Math.max(form.min, rounded));
}

function AmountControl(props: { form: AmountForm; turn: TurnBinding; table: GameTable; obs: unknown }) {
  const { form, turn, table } = props;
  const [amount, setAmount] = useState(form.min);
  useEffect(() => setAmount(form.min), [form.min, form.max]);
  const presets = table.presets?.(form, props.obs as never) ?? [];
  const step = form.integer ? 1 : Math.max(0.01, (form.max - form.min) / 100);
  const name = label(form.type, table);
  const submit = () => turn.submit({ type: form.type, amount: clamp(amount, form) });
  return (
    <form
      class="amount-control"
      onSubmit={(e) => {
        e.preventDefault();
        submit();
      }}
    >
      <label>
        <span class="control-label">{name}</span>
        <input
          type="range"
          min={form.min}
          max={form.max}
          step={step}
          value={amount}
          aria-label={`${name} amount`}
          onInput={(e) => setAmount(Number((e.currentTarget as HTMLInputElement).value))}
        />
      </label>
      <input
        type="number"
        class="amount-box"
        min={form.min}
        max={form.max}
        step={form.integer ? 1 : "any"}
        value={amount}
        aria-label={`${name} amount (${form.min} to ${form.max})`}
        onInput={(e) => {
          const n = Number((e.currentTarget as HTMLInputElement).value);
          if (Number.isFinite(n)) setAmount(n);
        }}
        onBlur={() => setAmount(clamp(amount, form))}
      />
      {presets.length > 0 && (
        <span class="presets">
          {presets.map((p) => (
            <button type="button" class="preset" onClick={() => setAmount(clamp(p.amount, form))}>{p.label}</button>
          ))}
        </span>
      )}
      <button type="submit" class={`action action-${form.type}`}>
        {name} {fmt(clamp(amount, form))}
      </button>
      <span class="range-hint">
        {fmt(form.min)}–{fmt(form.max)}
      </span>
    </form>
  );
}

export function fmt(n: number): string {
  return Number.isInteger(n) ? n.toLocaleString("en") : n.toFixed(2);
}

function TextControl(props: { form: TextForm; turn: TurnBinding; table: GameTable }) {
  const { form, turn, table } = props;
  const [text, setText] = useState("");
  const send = () => {
    if (text.trim() === "") return;
    turn.submit({ type: form.type, text: text.trim() });
    setText("");
  };
  return (
    <form
      class="text-control"
      onSubmit={(e) => {
        e.preventDefault();
        send();
      }}
    >
      <textarea
        rows={2}
        maxLength={form.maxLength}
        value={text}
        placeholder={`${label(form.type, table)} (Enter sends, Shift+Enter for a new line)`}
        aria-label={label(form.type, table)}
        onInput={(e) => setText((e.currentTarget as HTMLTextAreaElement).value)}
        onKeyDown={(e) => {
          if (e.key === "Enter" && !e.shiftKey) {
            e.preventDefault();
            send();
          }
        }}
      />
      <div class="text-meta">
        <span class="counter">{text.length}/{form.maxLength}</span>
        <button type="submit" class={`action action-${form.type}`} disabled={text.trim() === ""}>
          Send {label(form.type, table).toLowerCase()}
        </button>
      </div>
    </form>
  );
}

function Stepper(props: { label: string; value: number; max: number; onChange: (n: number) => void }) {
  const { value, max } = props;
  return (
    <label class="stepper">
      <span>{props.label}</span>
      <button
        type="button"
        aria-label={`fewer ${props.label}`}
        disabled={value <= 0}
        onClick={() => props.onChange(value - 1)}
      >
        −
      </button>
      <input
        type="number"
        min={0}
        max={max}
        step={1}
        value={value}
        aria-label={props.label}
        onInput={(e) => {
          const n = Math.round(Number((e.currentTarget as HTMLInputElement).value));
          if (Number.isFinite(n)) props.onChange(Math.min(max, Math.max(0, n)));
        }}
      />
      <button
        type="button"
        aria-label={`more ${props.label}`}
        disabled={value >= max}
        onClick={() => props.onChange(value + 1)}
      >
        +
      </button>
      <span class="of">of {max}</span>
    </label>
  );
}

function SplitControl(props: { form: SplitForm; turn: TurnBinding; table: GameTable }) {
  const { form, turn, table } = props;
  const [take, setTake] = useState<number[]>(() => form.max.map(() => 0));
  useEffect(() => setTake(form.max.map(() => 0)), [form.max.join(",")]);
  return (
    <form
      class="split-control"
      onSubmit={(e) => {
        e.preventDefault();
        turn.submit({ type: form.type, take });
      }}
    >
      <span class="control-label">{label(form.type, table)}: how many you take</span>
      {form.items.map((item, i) => (
        <Stepper
          label={item}
          value={take[i] ?? 0}
          max={form.max[i]}
          onChange={(n) => setTake(take.map((v, j) => (j === i ? n : v)))}
        />
      ))}
      <button type="submit" class={`action action-${form.type}`}>{label(form.type, table)}</button>
    </form>
  );
}

function ExchangeControl(props: { form: ExchangeForm; turn: TurnBinding; table: GameTable }) {
  const { form, turn, table } = props;
  const [give, setGive] = useState<Record<string, number>>({});
  const [get, setGet] = useState<Record<string, number>>({});
  const [text, setText] = useState("");
  const pick = (bundle: Record<string, number>) => Object.fromEntries(Object.entries(bundle).filter(([, n]) => n > 0));
  const ready = Object.keys(pick(give)).length > 0 && Object.keys(pick(get)).length > 0;
  const side = (
    title: string,
    max: Readonly<Record<string, number>>,
    value: Record<string, number>,
    set: typeof setGive,
  ) => (
    <fieldset class="exchange-side">
      <legend>{title}</legend>
      {Object.entries(max).filter(([, m]) => m > 0).map(([name, m]) => (
        <Stepper
          label={name}
          value={value[name] ?? 0}
          max={m}
          onChange={(n) => set({ ...value, [name]: n })}
        />
      ))}
    </fieldset>
  );
  return (
    <form
      class="exchange-control"
      onSubmit={(e) => {
        e.preventDefault();
        if (!ready) return;
        turn.submit({
          type: form.type,
          give: pick(give),
          get: pick(get),
          ...(text.trim() ? { text: text.trim() } : {}),
        });
        setGive({});
        setGet({});
        setText("");
      }}
    >
      <span class="control-label">{label(form.type, table)}</span>
      <div class="exchange-sides">
        {side("You give", form.give, give, setGive)}
        {side("You get", form.get, get, setGet)}
      </div>
      {form.maxText > 0 && (
        <input
          type="text"
          maxLength={form.maxText}
          value={text}
          placeholder="A message with the offer (optional)"
          aria-label="message with the offer"
          onInput={(e) => setText((e.currentTarget as HTMLInputElement).value)}
        />
      )}
      <button type="submit" class={`action action-${form.type}`} disabled={!ready}>
        {ready ? `${label(form.type, table)}` : "Choose at least one to give and one to get"}
      </button>
    </form>
  );
}
