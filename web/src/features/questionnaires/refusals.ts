/**
 * Which field of the question form an API refusal is about, read from the service's message
 * (src/modules/questionnaires/questions.ts names the field it refuses); null: shown above the form.
 */
export type QuestionField = 'text' | 'type' | 'options' | 'accepted_types' | 'control_mappings';

export function questionFieldOf(message: string): QuestionField | null {
  if (/control mapping|control_ids/.test(message)) return 'control_mappings';
  if (/accepted_types|file extension/.test(message)) return 'accepted_types';
  if (/options?\b|option value/.test(message)) return 'options';
  if (/text is required|\/text\b/.test(message)) return 'text';
  if (/type must be/.test(message)) return 'type';
  return null;
}

/** The assign form's fields, likewise (questionnaire-service.ts, people.ts). */
export type AssignField = 'assignees' | 'reviewer_id' | 'due_date';

export function assignFieldOf(message: string): AssignField | null {
  if (/due_date/.test(message)) return 'due_date';
  if (/reviewer/.test(message)) return 'reviewer_id';
  if (/assignee|user "|open assessment/.test(message)) return 'assignees';
  return null;
}
